package sessionmap

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a Store (and Admin) kept in a Redis or Valkey server, so that
// several bridge replicas share one index: any replica can serve any
// session or task. It lives in this package so that it applies the very
// same record rules (validation, monotonic status, pinned cancel, answered
// keys, cursors, record encoding) as the Badger and memory stores.
//
// Key layout, under a prefix P (RedisConfig.Prefix, so bridges can share a
// server):
//
//	P:meta:layout          layout version ("1")
//	P:meta:secret          cursor MAC secret (32 random bytes), shared by every replica
//	P:s:<session id>       session record (expires with the session's idle timeout)
//	P:t:<task id>          task record (expires at CreatedAt+TTL)
//	P:i:<scope hash>       sorted set, all scores 0: members order(8)|task id, so
//	                       ZRANGEBYLEX walks a scope's tasks newest first
//	P:o:<owner hash>       set of the same members for one exact (principal,
//	                       session) pair, for DeleteSessionTasks
//
// Every key carries a Redis TTL: records their own, index keys the latest of
// their members' (none while a member has none), so Redis removes everything
// by itself and no GC loop runs. An index member whose record is gone is
// skipped when listing and removed then. (An index key that once held a task
// without a TTL keeps none; after DeleteSessionTasks removed that task, its
// remaining dangling members go when the scope is next listed.) Expiry is still checked against the
// store's clock on every read, so a record is invisible exactly at its expiry
// (L-64, L-65) whatever Redis's own timing.
//
// Writes are atomic: a create is one Lua script (existence check, record and
// both index entries); updates read the record under WATCH, apply the shared
// rule in Go and write it back in MULTI/EXEC, retrying when another writer
// (another replica) got there first. A write returns once Redis acknowledged
// it and, with RedisConfig.WaitReplicas > 0, once WAIT saw that many replicas
// acknowledge it too.
type Redis struct {
	rdb    *redis.Client
	opt    options
	cfg    RedisConfig
	addr   string // host:port, never the credentials
	keys   redisKeys
	secret []byte
	closed atomic.Bool
}

var (
	_ Store = (*Redis)(nil)
	_ Admin = (*Redis)(nil)
)

// ErrNotReplicated: a write was applied on the Redis primary but fewer
// replicas than RedisConfig.WaitReplicas acknowledged it in time. The caller
// must treat the operation as failed (no handle is returned), although the
// primary may keep the record.
var ErrNotReplicated = errors.New("sessionmap: redis write not acknowledged by enough replicas")

// RedisConfig says which Redis to use and how.
type RedisConfig struct {
	// URL is redis://[USER:PASSWORD@]HOST:PORT/DB or rediss://... (TLS).
	URL string
	// Prefix namespaces every key, so several bridges can share one Redis
	// database: letters, digits, '.', '_' and '-' (default DefaultRedisPrefix).
	Prefix string
	// WaitReplicas > 0 makes every write wait (Redis WAIT) until that many
	// replicas acknowledged it, for up to WaitTimeout.
	WaitReplicas int
	// WaitTimeout bounds each WAIT (default DefaultRedisWaitTimeout).
	WaitTimeout time.Duration
}

// Defaults of RedisConfig.
const (
	DefaultRedisPrefix      = "tasksbridge"
	DefaultRedisWaitTimeout = 2 * time.Second
	redisLayoutVersion      = "1"
	redisDialTimeout        = 5 * time.Second
)

var redisPrefixRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// IsRedisURL reports whether s names a Redis store (redis:// or rediss://).
func IsRedisURL(s string) bool {
	return strings.HasPrefix(s, "redis://") || strings.HasPrefix(s, "rediss://")
}

// RedactURL returns u with any password replaced, for logs and errors.
// A string that does not parse is not shown at all.
func RedactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL, not shown)"
	}
	return p.Redacted()
}

type redisKeys struct{ base string }

func (k redisKeys) layout() string           { return k.base + "meta:layout" }
func (k redisKeys) secret() string           { return k.base + "meta:secret" }
func (k redisKeys) session(id string) string { return k.base + "s:" + id }
func (k redisKeys) task(id string) string    { return k.base + "t:" + id }
func (k redisKeys) list(sc Scope) string {
	return k.base + "i:" + hex.EncodeToString(scopePrefix(sc)[2:])
}
func (k redisKeys) owner(sc Scope) string {
	return k.base + "o:" + hex.EncodeToString(ownerPrefix(sc)[2:])
}
func (k redisKeys) sessionPattern() string      { return k.base + "s:*" }
func (k redisKeys) taskPattern() string         { return k.base + "t:*" }
func (k redisKeys) stripTask(key string) string { return strings.TrimPrefix(key, k.base+"t:") }

// listMember is a task's entry in its scope's sorted set: the newest-first
// order key, then the id, so byte order is list order.
func listMember(p pos) string {
	o := orderKey(p.created)
	return string(o[:]) + p.id
}

func memberID(m string) string {
	if len(m) < 8 {
		return ""
	}
	return m[8:]
}

// OpenRedis connects to the Redis of cfg.URL and checks that it can be used.
// Errors name the address, never the password. ReadOnly() (admin commands)
// writes nothing, not even the cursor secret.
func OpenRedis(ctx context.Context, cfg RedisConfig, opts ...Option) (*Redis, error) {
	o := buildOptions(opts)
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultRedisPrefix
	}
	if !redisPrefixRE.MatchString(cfg.Prefix) {
		return nil, fmt.Errorf("sessionmap: redis key prefix %q: use 1 to 64 letters, digits, '.', '_' or '-'", cfg.Prefix)
	}
	if cfg.WaitReplicas < 0 {
		return nil, fmt.Errorf("sessionmap: redis wait replicas must be 0 or more, not %d", cfg.WaitReplicas)
	}
	if cfg.WaitTimeout <= 0 {
		cfg.WaitTimeout = DefaultRedisWaitTimeout
	}
	// Parse here first: url.Parse's own errors quote the whole URL, password included.
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return nil, errors.New("sessionmap: the Redis store URL must look like redis://[USER:PASSWORD@]HOST:PORT/DB " +
			"or rediss://... (the value given is not shown: it may hold a password)")
	}
	ro, err := redis.ParseURL(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("sessionmap: Redis store URL %s: %v", u.Redacted(), err)
	}
	redisLibLogOnce.Do(func() { redis.SetLogger(redisLibLogger{}) })
	ro.DialTimeout = redisDialTimeout
	ro.DisableIdentity = true // no CLIENT SETINFO: older servers and proxies refuse it
	r := &Redis{rdb: redis.NewClient(ro), opt: o, cfg: cfg, addr: ro.Addr,
		keys: redisKeys{base: cfg.Prefix + ":"}}
	if err := r.init(ctx, ro.DB); err != nil {
		_ = r.rdb.Close()
		return nil, err
	}
	return r, nil
}

// go-redis logs its retries on its own (process-wide) logger; they are
// library internals, so they go to slog at debug level, where an operator
// who asks for them finds them. The store reports its own failures as errors.
var redisLibLogOnce sync.Once

type redisLibLogger struct{}

func (redisLibLogger) Printf(ctx context.Context, format string, v ...any) {
	slog.Default().DebugContext(ctx, "redis client: "+fmt.Sprintf(format, v...))
}

// init checks the server and the layout and loads (or creates) the secret.
func (r *Redis) init(ctx context.Context, db int) error {
	where := fmt.Sprintf("Redis at %s (database %d)", r.addr, db)
	info, err := r.rdb.Info(ctx, "server").Result()
	if err != nil {
		return fmt.Errorf("sessionmap: cannot use the %s: %w", where, err)
	}
	if v := infoField(info, "redis_version"); v != "" {
		if major, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0]); major > 0 && major < 7 {
			return fmt.Errorf("sessionmap: the %s is version %s; the bridge needs Redis 7.0 or later (or Valkey)", where, v)
		}
	}
	if v, err := r.rdb.Get(ctx, r.keys.layout()).Result(); err == nil && v != redisLayoutVersion {
		return fmt.Errorf("%w: the %s holds layout %q under prefix %q, this bridge reads %q",
			ErrUnsupportedVersion, where, v, r.cfg.Prefix, redisLayoutVersion)
	} else if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("sessionmap: cannot use the %s: %w", where, err)
	}
	if !r.opt.readOnly {
		// SET NX: the first replica to start picks the secret, all use it.
		secret := make([]byte, secretLen)
		_, _ = rand.Read(secret)
		if err := r.rdb.SetNX(ctx, r.keys.secret(), secret, 0).Err(); err != nil {
			return fmt.Errorf("sessionmap: cannot use the %s: %w", where, err)
		}
		if err := r.rdb.SetNX(ctx, r.keys.layout(), redisLayoutVersion, 0).Err(); err != nil {
			return fmt.Errorf("sessionmap: cannot use the %s: %w", where, err)
		}
	}
	v, err := r.rdb.Get(ctx, r.keys.secret()).Bytes()
	switch {
	case err == nil && len(v) == secretLen:
		r.secret = v
	case errors.Is(err, redis.Nil) && r.opt.readOnly:
		r.secret = make([]byte, secretLen) // nothing was ever listed: no cursor to honour
		_, _ = rand.Read(r.secret)
	case err == nil:
		return fmt.Errorf("%w: cursor secret under prefix %q in the %s", ErrCorrupt, r.cfg.Prefix, where)
	default:
		return fmt.Errorf("sessionmap: cannot use the %s: %w", where, err)
	}
	return nil
}

func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}

// Addr returns the Redis server's HOST:PORT (no credentials).
func (r *Redis) Addr() string { return r.addr }

// Prefix returns the key prefix.
func (r *Redis) Prefix() string { return r.cfg.Prefix }

// Client returns the store's Redis client, for the coordination of replicas
// (internal/coord) under the same prefix; the store still owns it.
func (r *Redis) Client() *redis.Client { return r.rdb }

// Close closes the connections; the data stays in Redis.
func (r *Redis) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	if err := r.rdb.Close(); err != nil {
		return fmt.Errorf("sessionmap: close Redis connection to %s: %w", r.addr, err)
	}
	return nil
}

func (r *Redis) now() time.Time { return r.opt.clock() }

// fail wraps a Redis error with the operation and the server address.
func (r *Redis) fail(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, redis.ErrClosed) || r.closed.Load():
		return ErrClosed
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, ErrNotFound), errors.Is(err, ErrExists), errors.Is(err, ErrTerminal),
		errors.Is(err, ErrInvalidArgument), errors.Is(err, ErrNotReplicated), errors.Is(err, ErrCorrupt),
		errors.Is(err, ErrUnsupportedVersion), errors.Is(err, ErrReadOnly):
		return err
	}
	return fmt.Errorf("sessionmap: %s: Redis at %s: %w", op, r.addr, err)
}

func (r *Redis) enter(ctx context.Context) error {
	if r.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

func (r *Redis) writable() error {
	if r.opt.readOnly {
		return ErrReadOnly
	}
	return nil
}

// waitReplicas blocks on WAIT on the connection that made the write (WAIT
// counts the replicas that acknowledged that connection's writes).
func (r *Redis) waitReplicas(ctx context.Context, c oneConn) error {
	n := r.cfg.WaitReplicas
	if n <= 0 {
		return nil
	}
	got, err := c.Wait(ctx, n, r.cfg.WaitTimeout).Result()
	if err != nil {
		return err
	}
	if got < int64(n) {
		return fmt.Errorf("%w: %d of %d replicas of the Redis at %s acknowledged the write within %s "+
			"(--redis-wait-replicas); check the replicas' links (INFO replication)",
			ErrNotReplicated, got, n, r.addr, r.cfg.WaitTimeout)
	}
	return nil
}

// oneConn is a single connection (redis.Tx or redis.Conn): WAIT is
// meaningful only there, which is why go-redis keeps it out of Cmdable.
type oneConn interface {
	Wait(ctx context.Context, numReplicas int, timeout time.Duration) *redis.IntCmd
}

// ttlUntil is the Redis TTL for a logical expiry at on the store's clock
// (0: none). It is relative, so Redis's clock and the store's need not agree;
// a record due now or earlier gets the shortest TTL.
func ttlUntil(at, now time.Time) time.Duration {
	if at.IsZero() {
		return 0
	}
	return max(at.Sub(now), time.Millisecond)
}

// watchTx is a WATCHed connection; exec is the one way to write through it,
// so watched knows whether there is a write to WAIT for.
type watchTx struct {
	*redis.Tx
	wrote bool
}

// exec writes in MULTI/EXEC; it fails with redis.TxFailedErr when a
// watched key changed meanwhile.
func (w *watchTx) exec(ctx context.Context, fill func(p redis.Pipeliner)) error {
	w.wrote = true
	_, err := w.TxPipelined(ctx, func(p redis.Pipeliner) error {
		fill(p)
		return nil
	})
	return err
}

// watched runs fn under WATCH keys on one connection, then WAIT if fn
// wrote, retrying when another writer changed a watched key first (fn must
// be repeatable). A call that changes nothing waits for no replica.
func (r *Redis) watched(ctx context.Context, op string, fn func(tx *watchTx) error, keys ...string) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	if err := r.writable(); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		err := r.rdb.Watch(ctx, func(tx *redis.Tx) error {
			w := &watchTx{Tx: tx}
			if err := fn(w); err != nil || !w.wrote {
				return err
			}
			return r.waitReplicas(ctx, tx)
		}, keys...)
		if !errors.Is(err, redis.TxFailedErr) {
			return r.fail(op, err)
		}
		if attempt >= maxRetries {
			return r.fail(op, fmt.Errorf("gave up after %d conflicting writers", attempt))
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// --- sessions ---

// getRecord reads one record; a missing key or an id no store would accept
// is the bare ErrNotFound.
func getRecord(ctx context.Context, c redis.Cmdable, id, key string) ([]byte, error) {
	if !validID(id) {
		return nil, ErrNotFound
	}
	v, err := c.Get(ctx, key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	return v, err
}

func (r *Redis) loadSession(ctx context.Context, c redis.Cmdable, id string) (Session, error) {
	v, err := getRecord(ctx, c, id, r.keys.session(id))
	if err != nil {
		return Session{}, err
	}
	return decodeSession("session record", v)
}

func (r *Redis) visibleSession(ctx context.Context, c redis.Cmdable, sc Scope) (Session, error) {
	s, err := r.loadSession(ctx, c, sc.Session)
	if err != nil {
		return Session{}, err
	}
	if !sessionVisible(s, sc, r.now()) {
		return Session{}, ErrNotFound
	}
	return s, nil
}

func (r *Redis) putSession(ctx context.Context, tx *watchTx, s Session, now time.Time) error {
	val, err := encodeSession(s)
	if err != nil {
		return err
	}
	return tx.exec(ctx, func(p redis.Pipeliner) {
		p.Set(ctx, r.keys.session(s.ID), val, ttlUntil(s.ExpiresAt, now))
	})
}

func (r *Redis) CreateSession(ctx context.Context, s Session) error {
	now := r.now()
	s, err := prepareSession(s, now)
	if err != nil {
		return err
	}
	return r.watched(ctx, "create session", func(tx *watchTx) error {
		old, err := r.loadSession(ctx, tx, s.ID)
		switch {
		case err == nil && !sessionExpired(old, now):
			return fmt.Errorf("%w: session", ErrExists)
		case err != nil && !errors.Is(err, ErrNotFound):
			return err // never overwrite a record this bridge cannot read
		}
		return r.putSession(ctx, tx, s, now)
	}, r.keys.session(s.ID))
}

func (r *Redis) GetSession(ctx context.Context, sc Scope) (Session, error) {
	if err := r.enter(ctx); err != nil {
		return Session{}, err
	}
	s, err := r.visibleSession(ctx, r.rdb, sc)
	return s, r.fail("read session", err)
}

func (r *Redis) TouchSession(ctx context.Context, sc Scope, logLevel *string) (Session, error) {
	var out Session
	err := r.watched(ctx, "touch session", func(tx *watchTx) error {
		s, err := r.visibleSession(ctx, tx, sc)
		if err != nil {
			return err
		}
		now := r.now()
		next, changed := touchSession(s, logLevel, now)
		out = next
		if !changed {
			return nil
		}
		return r.putSession(ctx, tx, next, now)
	}, r.keys.session(sc.Session))
	return out, err
}

func (r *Redis) DeleteSession(ctx context.Context, sc Scope) error {
	return r.watched(ctx, "delete session", func(tx *watchTx) error {
		if _, err := r.visibleSession(ctx, tx, sc); err != nil {
			return err
		}
		return tx.exec(ctx, func(p redis.Pipeliner) { p.Del(ctx, r.keys.session(sc.Session)) })
	}, r.keys.session(sc.Session))
}

// --- tasks ---

// createTaskScript stores a new task and its two index entries atomically.
// An index key's TTL becomes the latest of its members' (PERSIST for a member
// without one); PEXPIRE GT needs Redis 7.
//
// KEYS: task, list, owner. ARGV: record, ttl ms (0: none), member.
var createTaskScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local ms = tonumber(ARGV[2])
if ms > 0 then redis.call('SET', KEYS[1], ARGV[1], 'PX', ms) else redis.call('SET', KEYS[1], ARGV[1]) end
for i = 2, 3 do
  local existed = redis.call('EXISTS', KEYS[i])
  if i == 2 then redis.call('ZADD', KEYS[i], 0, ARGV[3]) else redis.call('SADD', KEYS[i], ARGV[3]) end
  if ms == 0 then redis.call('PERSIST', KEYS[i])
  elseif existed == 0 then redis.call('PEXPIRE', KEYS[i], ms)
  else redis.call('PEXPIRE', KEYS[i], ms, 'GT') end
end
return 1
`)

func (r *Redis) CreateTask(ctx context.Context, t Task) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	if err := r.writable(); err != nil {
		return err
	}
	now := r.now()
	t, err := prepareTask(t, now)
	if err != nil {
		return err
	}
	val, err := encodeTask(t)
	if err != nil {
		return err
	}
	var ttl time.Duration
	if at, ok := t.ExpiresAt(); ok {
		ttl = ttlUntil(at, now)
	}
	// One connection for the script and its WAIT.
	conn := r.rdb.Conn()
	defer conn.Close()
	created, err := createTaskScript.Run(ctx, conn,
		[]string{r.keys.task(t.ID), r.keys.list(t.Scope), r.keys.owner(t.Scope)},
		val, ttl.Milliseconds(), listMember(posOf(t))).Int()
	if err != nil {
		return r.fail("create task", err)
	}
	if created == 0 {
		return fmt.Errorf("%w: task", ErrExists)
	}
	return r.fail("create task", r.waitReplicas(ctx, conn))
}

func (r *Redis) loadTask(ctx context.Context, c redis.Cmdable, id string) (Task, error) {
	v, err := getRecord(ctx, c, id, r.keys.task(id))
	if err != nil {
		return Task{}, err
	}
	return decodeTask("task record", v)
}

// visibleTask is the scope and expiry check (invariant 4): anything the
// caller may not see is the bare ErrNotFound.
func (r *Redis) visibleTask(ctx context.Context, c redis.Cmdable, sc Scope, id string) (Task, error) {
	if !sc.Valid() {
		return Task{}, ErrNotFound
	}
	t, err := r.loadTask(ctx, c, id)
	if err != nil {
		return Task{}, err
	}
	if !sc.Owns(t) || t.Expired(r.now()) {
		return Task{}, ErrNotFound
	}
	return t, nil
}

func (r *Redis) GetTask(ctx context.Context, sc Scope, id string) (Task, error) {
	if err := r.enter(ctx); err != nil {
		return Task{}, err
	}
	t, err := r.visibleTask(ctx, r.rdb, sc, id)
	return t, r.fail("read task", err)
}

// mutateTask reads a visible task under WATCH, applies fn and, when fn
// reports a change, writes it back keeping its TTL. The list reads the
// records themselves, so it never disagrees with GetTask (L-52).
func (r *Redis) mutateTask(ctx context.Context, op string, sc Scope, id string,
	fn func(cur Task, now time.Time) (Task, bool, error)) (Task, error) {
	var out Task
	err := r.watched(ctx, op, func(tx *watchTx) error {
		cur, err := r.visibleTask(ctx, tx, sc, id)
		if err != nil {
			return err
		}
		next, changed, ferr := fn(cur, r.now())
		out = next
		if ferr != nil || !changed {
			return ferr
		}
		val, err := encodeTask(next)
		if err != nil {
			return err
		}
		return tx.exec(ctx, func(p redis.Pipeliner) {
			p.SetArgs(ctx, r.keys.task(id), val, redis.SetArgs{KeepTTL: true, Mode: "XX"})
		})
	}, r.keys.task(id))
	return out, err
}

func (r *Redis) UpdateStatus(ctx context.Context, sc Scope, id string, snap Snapshot) (Task, error) {
	return r.mutateTask(ctx, "update task", sc, id, func(cur Task, now time.Time) (Task, bool, error) {
		return applySnapshot(cur, snap, now)
	})
}

func (r *Redis) PinCancel(ctx context.Context, sc Scope, id string) (Task, error) {
	return r.mutateTask(ctx, "cancel task", sc, id, func(cur Task, now time.Time) (Task, bool, error) {
		next, err := pinCancel(cur, now)
		return next, err == nil, err
	})
}

func (r *Redis) SettleUpstream(ctx context.Context, sc Scope, id string) (Task, error) {
	return r.mutateTask(ctx, "settle upstream cancel", sc, id, func(cur Task, now time.Time) (Task, bool, error) {
		next, changed := settleUpstream(cur, now)
		return next, changed, nil
	})
}

// PendingUpstream scans every task of the prefix, like Badger's (the debt is
// rare and read at start-up). Every replica sees the same debts.
func (r *Redis) PendingUpstream(ctx context.Context) ([]Task, error) {
	return r.AllTasks(ctx, TaskFilter{UpstreamCancelPending: true})
}

func (r *Redis) RecordAnswered(ctx context.Context, sc Scope, id string, keys []string) ([]string, error) {
	var fresh []string
	_, err := r.mutateTask(ctx, "record answered input", sc, id, func(cur Task, now time.Time) (Task, bool, error) {
		var next Task
		next, fresh = recordAnswered(cur, keys, now)
		return next, len(fresh) > 0, nil
	})
	if errors.Is(err, ErrNotReplicated) && len(fresh) > 0 {
		// The keys reached the primary only and the caller will not send
		// them. Left recorded, they would never be sent by anyone (the next
		// try finds them answered) and the task would wait for its input
		// forever; taken back, the next try records and sends them once.
		r.forgetAnswered(ctx, sc, id, fresh)
	}
	if err != nil {
		return nil, err
	}
	return fresh, nil
}

// forgetAnswered removes keys from a task's answered set (best effort).
func (r *Redis) forgetAnswered(ctx context.Context, sc Scope, id string, keys []string) {
	_, err := r.mutateTask(ctx, "take back answered input", sc, id, func(cur Task, now time.Time) (Task, bool, error) {
		next := cur
		next.AnsweredKeys = slices.DeleteFunc(slices.Clone(cur.AnsweredKeys), func(k string) bool { return slices.Contains(keys, k) })
		return next, len(next.AnsweredKeys) != len(cur.AnsweredKeys), nil
	})
	if err != nil && !errors.Is(err, ErrNotReplicated) {
		r.opt.logger.Warn("sessionmap: cannot take back input answers that did not reach the Redis replicas; "+
			"they will not be sent again", "redis", r.addr, "err", err)
	}
}

func (r *Redis) ListTasks(ctx context.Context, sc Scope, pageSize int, cursor string) (Page, error) {
	if !sc.Valid() {
		return Page{}, invalid("list scope needs a principal or a session")
	}
	if err := r.enter(ctx); err != nil {
		return Page{}, err
	}
	from := "-"
	if cursor != "" {
		p, err := decodeCursor(r.secret, sc, cursor)
		if err != nil {
			return Page{}, err
		}
		from = "(" + listMember(p) // exclusive: after the previous page's last task
	}
	n := clampPageSize(pageSize)
	now := r.now()
	listKey := r.keys.list(sc)
	page := Page{Tasks: make([]Task, 0, min(n, 128))}
	for {
		// One more than needed tells whether a next page exists.
		batch := int64(n - len(page.Tasks) + 1)
		members, err := r.rdb.ZRangeByLex(ctx, listKey, &redis.ZRangeBy{Min: from, Max: "+", Count: batch}).Result()
		if err != nil {
			return Page{}, r.fail("list tasks", err)
		}
		if len(members) == 0 {
			return page, nil
		}
		keys := make([]string, len(members))
		for i, m := range members {
			keys[i] = r.keys.task(memberID(m))
		}
		vals, err := r.rdb.MGet(ctx, keys...).Result()
		if err != nil {
			return Page{}, r.fail("list tasks", err)
		}
		var gone []any
		for i, v := range vals {
			s, ok := v.(string)
			if !ok {
				gone = append(gone, members[i]) // the record expired in Redis
				continue
			}
			t, err := decodeTask("task record", []byte(s))
			if err != nil {
				// One bad entry must not make the whole list unusable.
				r.opt.logger.Warn("sessionmap: skipping undecodable task in a list", "err", err)
				continue
			}
			if t.Expired(now) || !sc.Owns(t) {
				continue
			}
			if len(page.Tasks) == n {
				page.NextCursor = encodeCursor(r.secret, sc, posOf(page.Tasks[n-1]))
				break
			}
			page.Tasks = append(page.Tasks, listView(t))
		}
		if len(gone) > 0 && !r.opt.readOnly {
			// Index entries outlive their record by at most one list read.
			if err := r.rdb.ZRem(ctx, listKey, gone...).Err(); err != nil {
				r.opt.logger.Warn("sessionmap: cannot prune expired list entries", "redis", r.addr, "err", err)
			}
		}
		if page.NextCursor != "" || int64(len(members)) < batch {
			return page, nil
		}
		from = "(" + members[len(members)-1]
	}
}

func (r *Redis) DeleteSessionTasks(ctx context.Context, sc Scope) (int, error) {
	if err := r.enter(ctx); err != nil {
		return 0, err
	}
	if err := r.writable(); err != nil {
		return 0, err
	}
	ownerKey, listKey := r.keys.owner(sc), r.keys.list(sc)
	members, err := r.rdb.SMembers(ctx, ownerKey).Result()
	if err != nil {
		return 0, r.fail("delete session tasks", err)
	}
	if len(members) == 0 {
		return 0, nil
	}
	conn := r.rdb.Conn()
	defer conn.Close()
	var dels []*redis.IntCmd
	ms := make([]any, len(members))
	for i, m := range members {
		ms[i] = m
	}
	// Only the members read above: a task created meanwhile stays indexed.
	_, err = conn.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, m := range members {
			dels = append(dels, p.Del(ctx, r.keys.task(memberID(m))))
		}
		p.ZRem(ctx, listKey, ms...)
		p.SRem(ctx, ownerKey, ms...)
		return nil
	})
	if err != nil {
		return 0, r.fail("delete session tasks", err)
	}
	n := 0
	for _, d := range dels {
		n += int(d.Val())
	}
	return n, r.fail("delete session tasks", r.waitReplicas(ctx, conn))
}

// --- admin (operator view across scopes) ---

// scanValues returns the values of every key matching pattern (SCAN, then
// MGET in batches); keys that vanish meanwhile are skipped.
func (r *Redis) scanValues(ctx context.Context, pattern string, fn func(key, val string)) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	it := r.rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		vals, err := r.rdb.MGet(ctx, batch...).Result()
		if err != nil {
			return err
		}
		for i, v := range vals {
			if s, ok := v.(string); ok {
				fn(batch[i], s)
			}
		}
		batch = batch[:0]
		return nil
	}
	for it.Next(ctx) {
		batch = append(batch, it.Val())
		if len(batch) == 1000 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	return flush()
}

func (r *Redis) AllSessions(ctx context.Context) ([]Session, error) {
	var out []Session
	var bad []error
	now := r.now()
	err := r.scanValues(ctx, r.keys.sessionPattern(), func(key, val string) {
		s, err := decodeSession(fmt.Sprintf("session %q", strings.TrimPrefix(key, r.keys.base+"s:")), []byte(val))
		if err != nil {
			bad = append(bad, err)
			return
		}
		if !sessionExpired(s, now) {
			out = append(out, s)
		}
	})
	if err != nil {
		return nil, r.fail("list sessions", err)
	}
	slices.SortFunc(out, func(a, b Session) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out, errors.Join(bad...)
}

func (r *Redis) AllTasks(ctx context.Context, f TaskFilter) ([]Task, error) {
	var out []Task
	var bad []error
	now := r.now()
	err := r.scanValues(ctx, r.keys.taskPattern(), func(key, val string) {
		t, err := decodeTask(fmt.Sprintf("task %q", r.keys.stripTask(key)), []byte(val))
		if err != nil {
			bad = append(bad, err)
			return
		}
		if !t.Expired(now) && f.match(t) {
			out = append(out, t)
		}
	})
	if err != nil {
		return nil, r.fail("list tasks", err)
	}
	slices.SortFunc(out, newerFirst)
	return out, errors.Join(bad...)
}

func (r *Redis) LookupSession(ctx context.Context, id string) (Session, error) {
	if err := r.enter(ctx); err != nil {
		return Session{}, err
	}
	s, err := r.loadSession(ctx, r.rdb, id)
	if err == nil && sessionExpired(s, r.now()) {
		err = ErrNotFound
	}
	return s, r.fail("read session", err)
}

func (r *Redis) LookupTask(ctx context.Context, id string) (Task, error) {
	if err := r.enter(ctx); err != nil {
		return Task{}, err
	}
	t, err := r.loadTask(ctx, r.rdb, id)
	if err == nil && t.Expired(r.now()) {
		err = ErrNotFound
	}
	return t, r.fail("read task", err)
}
