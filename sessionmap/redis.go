package sessionmap

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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
// It runs on one server, on a Sentinel-managed primary and on a Redis
// Cluster (redis_conn.go names the URL forms).
//
// Key layout 2, under a prefix P (RedisConfig.Prefix, so bridges can share a
// server). Redis Cluster places a key by the part between its first "{" and
// the next "}" (its hash tag), and refuses a script or transaction whose keys
// are in different slots (CROSSSLOT); so every key carries the tag of the one
// thing the commands that touch it together are about:
//
//	P:meta:layout               layout version ("2"); read and set alone, no tag needed
//	P:meta:secret               cursor MAC secret (32 random bytes), shared by every replica; alone
//	P:meta:principal-key        the key of principal hashes (32 random bytes, principal_key.go),
//	                            shared by every replica (SET NX); alone
//	P:meta:epoch                the store's epoch (128 random bits, hex), written once with
//	                            SET NX by the first bridge on an empty prefix; read alone
//	                            (epoch.go: a bridge that finds it gone or changed stops)
//	P:meta:upstream-era:<digest>
//	                            the era remembered for one upstream (upstream_era.go);
//	                            read and set alone
//	P:s:{<session id>}          session record (expires with the session's idle timeout);
//	                            tag: the session, as it is WATCHed and written alone
//	P:t:{<task id>}             task record (expires at CreatedAt+TTL); tag: the task,
//	                            as every update WATCHes and writes that one key
//	P:i:{<scope hash>}          sorted set, all scores 0: members order(8)|task id, so
//	                            ZRANGEBYLEX walks a scope's tasks newest first
//	P:o:{<scope hash>}<owner hash>
//	                            set of the same members for one exact (principal,
//	                            session) pair, for DeleteSessionTasks; it shares the
//	                            scope's tag (the principal index, or the session when
//	                            there is no principal) because a task's create adds
//	                            it to both in one script and DeleteSessionTasks
//	                            removes from both in one MULTI
//	P:ak:{<task id>}<key hash>  which call recorded an input key as answered (a nonce,
//	                            10 minutes); the task's tag, as it is written in the
//	                            MULTI that updates the task's record
//	P:w:{<tag>}                 a marker written only to make WAIT meaningful when a
//	                            retried write found its change already made (same tag
//	                            as the key it stands for, so the same primary)
//
// A task's record and its index entries are in different slots (the task's,
// the scope's), so a create is two atomic steps: the record (SET if absent,
// one script), then both index entries (one script); a failure between them
// leaves a record no list shows, for which no handle was returned. Layout 1
// (before hash tags) is refused at start-up with ErrUnsupportedVersion:
// docs/MIGRATION.md says how to drain it.
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
// Updates read the record under WATCH, apply the shared rule in Go and write
// it back in MULTI/EXEC, retrying when another writer (another replica) got
// there first. A write returns once Redis acknowledged it and, with
// RedisConfig.WaitReplicas > 0, once WAIT saw that many replicas acknowledge
// it too.
//
// Failover: an operation that meets what a failover, restart or resharding
// looks like (refused or broken connections, READONLY, LOADING, CLUSTERDOWN,
// TRYAGAIN, too few replicas for WAIT) is retried with backoff until it
// succeeds or RedisConfig.FailoverTimeout has passed since it began, then
// fails with ErrUnavailable: a caller sees a bounded stall, then a retriable
// error, never a hang. A retried write that may have been applied by the
// attempt before is recognised (a create finds its own record, an input
// answer finds its own key) so it is neither refused nor sent twice.
type Redis struct {
	rdb    redis.UniversalClient
	opt    options
	cfg    RedisConfig
	target RedisTarget
	addr   string // the topology and addresses (RedisTarget.String), never the credentials
	keys   redisKeys
	secret []byte
	pkey   []byte // principal_key.go
	epoch  *epochGuard
	closed atomic.Bool
	// stopEpoch ends the loop that reads the epoch (nil: no loop).
	stopEpoch chan struct{}
}

var (
	_ Store = (*Redis)(nil)
	_ Admin = (*Redis)(nil)
)

// lastRetryLog rate-limits the "Redis unavailable, retrying" warning.
var lastRetryLog atomic.Int64

// ErrNotReplicated: a write was applied on the Redis primary but fewer
// replicas than RedisConfig.WaitReplicas acknowledged it in time. The caller
// must treat the operation as failed (no handle is returned), although the
// primary may keep the record.
var ErrNotReplicated = errors.New("sessionmap: redis write not acknowledged by enough replicas")

// RedisConfig says which Redis to use and how.
type RedisConfig struct {
	// URL names the topology: redis://[USER:PASSWORD@]HOST:PORT/DB,
	// redis+sentinel://[USER:PASSWORD@]HOST:PORT,.../MASTER/DB or
	// redis+cluster://[USER:PASSWORD@]HOST:PORT,... (rediss… for TLS).
	URL string
	// User and Password, when set, replace the URL's (the password from a
	// file or the environment, so it is not on a command line).
	User, Password string
	// SentinelUser and SentinelPassword authenticate to the sentinels.
	SentinelUser, SentinelPassword string
	// CAFile verifies the servers' certificates (PEM) instead of the
	// system roots; CertFile and KeyFile are a client certificate (mutual
	// TLS). TLSServerName overrides the name checked in the certificate.
	CAFile, CertFile, KeyFile, TLSServerName string
	// FailoverTimeout bounds how long one operation keeps retrying while
	// the store is unreachable or has no writable primary. 0 is the
	// topology's default: DefaultRedisFailoverTimeout with Sentinel or
	// Cluster, no retry for one server (which has no failover to wait for:
	// an outage fails calls at once, as readiness checks expect); negative:
	// no retry.
	FailoverTimeout time.Duration
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
	// DefaultRedisFailoverTimeout covers a Sentinel failover with its
	// defaults' order of magnitude scaled down (down-after 5 s, then the
	// election and the promotion) and a Cluster node restart.
	DefaultRedisFailoverTimeout = 15 * time.Second
	redisLayoutVersion          = "2"
	redisDialTimeout            = 5 * time.Second
)

var redisPrefixRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

type redisKeys struct{ base string }

// The hash tag of each key is said in the Redis type's comment.
func (k redisKeys) layout() string           { return k.base + "meta:layout" }
func (k redisKeys) secret() string           { return k.base + "meta:secret" }
func (k redisKeys) epoch() string            { return k.base + "meta:epoch" }
func (k redisKeys) principalKey() string     { return k.base + "meta:principal-key" }
func (k redisKeys) session(id string) string { return k.base + "s:{" + id + "}" }
func (k redisKeys) task(id string) string    { return k.base + "t:{" + id + "}" }
func (k redisKeys) scopeTag(sc Scope) string {
	return "{" + hex.EncodeToString(scopePrefix(sc)[2:18]) + "}"
}
func (k redisKeys) list(sc Scope) string { return k.base + "i:" + k.scopeTag(sc) }
func (k redisKeys) owner(sc Scope) string {
	return k.base + "o:" + k.scopeTag(sc) + hex.EncodeToString(ownerPrefix(sc)[2:18])
}
func (k redisKeys) sessionPattern() string { return k.base + "s:{*" }
func (k redisKeys) taskPattern() string    { return k.base + "t:{*" }
func (k redisKeys) stripTask(key string) string {
	return strings.TrimSuffix(strings.TrimPrefix(key, k.base+"t:{"), "}")
}
func (k redisKeys) stripSession(key string) string {
	return strings.TrimSuffix(strings.TrimPrefix(key, k.base+"s:{"), "}")
}

// answerClaim is the claim of an input key answered by one call (the
// task's tag: written in the MULTI that updates the task's record).
func (k redisKeys) answerClaim(taskID, key string) string {
	h := sha256.Sum256([]byte(key))
	return k.base + "ak:{" + taskID + "}" + hex.EncodeToString(h[:16])
}

// waitMark is the marker key in the slot of key (same hash tag).
func (k redisKeys) waitMark(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return k.base + "w:" + key[i:i+j+2]
		}
	}
	return k.base + "w:{" + key + "}"
}

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
	target, err := ParseRedisURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.FailoverTimeout < 0:
		cfg.FailoverTimeout = 0
	case cfg.FailoverTimeout == 0 && target.Kind != RedisSingle:
		cfg.FailoverTimeout = DefaultRedisFailoverTimeout
	}
	redisLibLogOnce.Do(func() { redis.SetLogger(redisLibLogger{}) })
	rdb, err := newRedisClient(cfg, target)
	if err != nil {
		return nil, err
	}
	r := &Redis{rdb: rdb, opt: o, cfg: cfg, target: target, addr: target.String(),
		keys: redisKeys{base: cfg.Prefix + ":"}}
	start := r.init
	if target.Kind != RedisSingle {
		// A bridge that starts during a failover or a node restart waits
		// for it (bounded by FailoverTimeout) instead of exiting; one
		// server has no failover to wait for, so it is refused at once.
		start = func(ctx context.Context) error {
			return r.retry(ctx, "start", func(bool) error { return r.init(ctx) })
		}
	}
	if err := start(ctx); err != nil {
		_ = r.rdb.Close()
		return nil, err
	}
	if !o.readOnly {
		r.stopEpoch = make(chan struct{})
		every := redisEpochCheckInterval
		if o.epochEvery > 0 {
			every = o.epochEvery
		}
		go r.epochLoop(every, r.stopEpoch)
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
func (r *Redis) init(ctx context.Context) error {
	where := r.addr
	info, err := r.rdb.Info(ctx, "server").Result()
	if err != nil {
		return fmt.Errorf("sessionmap: cannot use the %s: %w", where, err)
	}
	if v := infoField(info, "redis_version"); v != "" {
		if major, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0]); major > 0 && major < 7 {
			return fmt.Errorf("sessionmap: the %s is version %s; the bridge needs Redis 7.0 or later (or Valkey)", where, v)
		}
	}
	if v, err := r.rdb.Get(ctx, r.keys.layout()).Result(); err == nil && v == "1" {
		// Layout 1 (keys without hash tags) is what bridges before Sentinel
		// and Cluster support wrote; its keys are not read here.
		return fmt.Errorf("%w: the %s holds key layout 1 under prefix %q, written by an older bridge; this bridge "+
			"writes layout %s (hash-tagged keys, for Redis Cluster). Drain it first: stop the old bridges once their "+
			"tasks are done and start this one with a new --redis-prefix, or delete the prefix's keys "+
			"(docs/MIGRATION.md, \"Store\")", ErrUnsupportedVersion, where, r.cfg.Prefix, redisLayoutVersion)
	} else if err == nil && v != redisLayoutVersion {
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
		// Also for a store written before epochs existed: it gets one now.
		if err := r.rdb.SetNX(ctx, r.keys.epoch(), newEpoch(), 0).Err(); err != nil {
			return fmt.Errorf("sessionmap: cannot use the %s: %w", where, err)
		}
	}
	if !r.opt.readOnly {
		if err := r.rdb.SetNX(ctx, r.keys.principalKey(), newPrincipalKey(), 0).Err(); err != nil {
			return fmt.Errorf("sessionmap: cannot use the %s: %w", where, err)
		}
	}
	switch v, err := r.rdb.Get(ctx, r.keys.principalKey()).Bytes(); {
	case err == nil && len(v) == principalKeyLen:
		r.pkey = v
	case errors.Is(err, redis.Nil) && r.opt.readOnly:
		// An admin view of a store no keying bridge has opened: nothing is keyed.
	case err == nil:
		return fmt.Errorf("%w: principal key under prefix %q in the %s", ErrCorrupt, r.cfg.Prefix, where)
	default:
		return fmt.Errorf("sessionmap: cannot use the %s: %w", where, err)
	}
	r.epoch = &epochGuard{where: fmt.Sprintf("%s (key prefix %q)", where, r.cfg.Prefix), log: r.opt.logger}
	switch ep, err := r.rdb.Get(ctx, r.keys.epoch()).Result(); {
	case err == nil:
		r.epoch.opened = ep
	case errors.Is(err, redis.Nil) && r.opt.readOnly:
		// An admin view of a store no bridge has opened since epochs exist.
	case errors.Is(err, redis.Nil):
		return fmt.Errorf("sessionmap: the %s lost the store's epoch while the bridge started; start it again", where)
	default:
		return fmt.Errorf("sessionmap: cannot use the %s: %w", where, err)
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

// PrincipalKey returns the store's principal key (principal_key.go).
func (r *Redis) PrincipalKey() []byte { return r.pkey }

// Addr names the Redis topology and its addresses (no credentials).
func (r *Redis) Addr() string { return r.addr }

// Target returns the parsed store URL's topology (its Password field is
// cleared).
func (r *Redis) Target() RedisTarget {
	t := r.target
	t.Password = ""
	return t
}

// Durability returns the store's --redis-wait-replicas, --redis-wait-timeout
// and --redis-failover-timeout, for the coordination that shares its client.
func (r *Redis) Durability() (waitReplicas int, waitTimeout, failoverTimeout time.Duration) {
	return r.cfg.WaitReplicas, r.cfg.WaitTimeout, r.cfg.FailoverTimeout
}

// Prefix returns the key prefix.
func (r *Redis) Prefix() string { return r.cfg.Prefix }

// Client returns the store's Redis client, for the coordination of replicas
// (runtime/coord) under the same prefix; the store still owns it.
func (r *Redis) Client() redis.UniversalClient { return r.rdb }

// Close closes the connections; the data stays in Redis.
func (r *Redis) Close() error {
	if r.closed.Swap(true) {
		return nil
	}
	if r.stopEpoch != nil {
		close(r.stopEpoch)
	}
	if err := r.rdb.Close(); err != nil {
		return fmt.Errorf("sessionmap: close Redis connection to %s: %w", r.addr, err)
	}
	return nil
}

func (r *Redis) now() time.Time { return r.opt.clock() }

// fail wraps a Redis error with the operation and the server address.
func (r *Redis) fail(ctx context.Context, op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound):
		// A miss may be the first sign that the store was emptied or
		// replaced: answer that, not "not found" (epoch.go).
		return r.missOrLost(ctx, err)
	case errors.Is(err, ErrStoreLost):
		return err
	case errors.Is(err, redis.ErrClosed) || r.closed.Load():
		return ErrClosed
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, ErrNotFound), errors.Is(err, ErrExists), errors.Is(err, ErrTerminal),
		errors.Is(err, ErrInvalidArgument), errors.Is(err, ErrNotReplicated), errors.Is(err, ErrCorrupt),
		errors.Is(err, ErrUnsupportedVersion), errors.Is(err, ErrReadOnly), errors.Is(err, ErrUnavailable):
		return err
	}
	return fmt.Errorf("sessionmap: %s: %s: %w", op, r.addr, err)
}

func (r *Redis) enter(ctx context.Context) error {
	if r.closed.Load() {
		return ErrClosed
	}
	if err := r.epoch.lostErr(); err != nil {
		return err
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
		return fmt.Errorf("%w: %d of %d replicas of the %s acknowledged the write within %s "+
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

// retry runs fn until it succeeds, fails for a reason a retry cannot
// change, or transient errors (a failover, a restart, a resharding: see
// transient) have lasted FailoverTimeout since the first attempt; it then
// fails with ErrUnavailable (or ErrNotReplicated when the primary was there
// but its replicas were not). unsure tells fn that an earlier attempt ended
// in a way that may have applied its write.
func (r *Redis) retry(ctx context.Context, op string, fn func(unsure bool) error) error {
	return r.retryIf(ctx, op, transient, fn)
}

// retryIf is retry for the errors again accepts.
func (r *Redis) retryIf(ctx context.Context, op string, again func(error) bool, fn func(unsure bool) error) error {
	start := time.Now()
	backoff := 20 * time.Millisecond
	unsure := false
	for {
		err := fn(unsure)
		if err == nil || !again(err) || r.closed.Load() || r.cfg.FailoverTimeout <= 0 {
			return err
		}
		waited := time.Since(start)
		if waited >= r.cfg.FailoverTimeout {
			if errors.Is(err, ErrNotReplicated) {
				return err
			}
			return fmt.Errorf("%w: %s: no answer from the %s for %s: %v",
				ErrUnavailable, op, r.addr, waited.Round(time.Millisecond), err)
		}
		unsure = true
		if now := time.Now().UnixNano(); now-lastRetryLog.Load() > int64(5*time.Second) {
			lastRetryLog.Store(now)
			r.opt.logger.Warn("sessionmap: the Redis store does not answer, retrying (failover or restart?)",
				"redis", r.addr, "op", op, "err", err.Error(), "gives_up_after", r.cfg.FailoverTimeout.String())
		}
		t := time.NewTimer(min(backoff, r.cfg.FailoverTimeout-waited))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		backoff = min(backoff*2, 250*time.Millisecond)
	}
}

// onConn runs fn on one connection to the primary that holds key (so WAIT
// after fn's writes counts the replicas of that primary, for that write).
// It WATCHes key only because that is how go-redis hands out a single
// connection on every topology (Client, FailoverClient, ClusterClient);
// fn sends no MULTI, so the WATCH changes nothing.
func (r *Redis) onConn(ctx context.Context, key string, fn func(c *redis.Tx) error) error {
	return r.rdb.Watch(ctx, fn, key)
}

// watchTx is a WATCHed connection; exec is the one way to write through it,
// so watched knows whether there is a write to WAIT for.
type watchTx struct {
	*redis.Tx
	wrote  bool
	unsure bool // an earlier attempt may have made this call's write
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

// watched runs fn under WATCH keys (one hash tag) on one connection, then
// WAIT if fn wrote, retrying when another writer changed a watched key
// first and, through retry, across a failover (fn must be repeatable). A
// call that changes nothing waits for no replica, unless an earlier attempt
// may have made the change: then a marker in the same slot is written so
// that WAIT covers that change too.
func (r *Redis) watched(ctx context.Context, op string, fn func(tx *watchTx) error, keys ...string) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	if err := r.writable(); err != nil {
		return err
	}
	return r.fail(ctx, op, r.retry(ctx, op, func(unsure bool) error {
		for attempt := 0; ; attempt++ {
			err := r.rdb.Watch(ctx, func(tx *redis.Tx) error {
				w := &watchTx{Tx: tx, unsure: unsure}
				if err := fn(w); err != nil {
					return err
				}
				if !w.wrote {
					if !unsure || r.cfg.WaitReplicas <= 0 {
						return nil
					}
					if err := tx.Set(ctx, r.keys.waitMark(keys[0]), "1", time.Minute).Err(); err != nil {
						return err
					}
				}
				return r.waitReplicas(ctx, tx)
			}, keys...)
			if !errors.Is(err, redis.TxFailedErr) {
				return err
			}
			if attempt >= maxRetries {
				return fmt.Errorf("gave up after %d conflicting writers", attempt)
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}))
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
	if !sessionVisibleKeyed(r.pkey, s, sc, r.now()) {
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
	var s Session
	err := r.retry(ctx, "read session", func(bool) (err error) {
		s, err = r.visibleSession(ctx, r.rdb, sc)
		return err
	})
	return s, r.fail(ctx, "read session", err)
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

// createRecordScript stores a new task record unless its key exists; it
// returns 1 when it wrote, 2 when the key holds exactly this record already
// (an earlier attempt of the same create, when retried), 0 otherwise.
//
// KEYS: task. ARGV: record, ttl ms (0: none).
var createRecordScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then return 2 end
if v then return 0 end
local ms = tonumber(ARGV[2])
if ms > 0 then redis.call('SET', KEYS[1], ARGV[1], 'PX', ms) else redis.call('SET', KEYS[1], ARGV[1]) end
return 1
`)

// indexTaskScript adds a task to its scope's list and owner set (one hash
// tag). An index key's TTL becomes the latest of its members' (PERSIST for
// a member without one); PEXPIRE GT needs Redis 7. Adding again changes
// nothing, so a retry is harmless.
//
// KEYS: list, owner. ARGV: ttl ms (0: none), member.
var indexTaskScript = redis.NewScript(`
local ms = tonumber(ARGV[1])
for i = 1, 2 do
  local existed = redis.call('EXISTS', KEYS[i])
  if i == 1 then redis.call('ZADD', KEYS[i], 0, ARGV[2]) else redis.call('SADD', KEYS[i], ARGV[2]) end
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
	taskKey, listKey, ownerKey := r.keys.task(t.ID), r.keys.list(t.Scope), r.keys.owner(t.Scope)
	err = r.retry(ctx, "create task", func(unsure bool) error {
		// The record first (the task's slot), replicated; then the index
		// (the scope's slot), replicated: a handle is returned only once both are.
		err := r.onConn(ctx, taskKey, func(c *redis.Tx) error {
			n, err := createRecordScript.Run(ctx, c, []string{taskKey}, val, ttl.Milliseconds()).Int()
			switch {
			case err != nil:
				return err
			case n == 0, n == 2 && !unsure:
				return fmt.Errorf("%w: task", ErrExists)
			}
			return r.waitReplicas(ctx, c)
		})
		if err != nil {
			return err
		}
		return r.onConn(ctx, listKey, func(c *redis.Tx) error {
			if err := indexTaskScript.Run(ctx, c, []string{listKey, ownerKey}, ttl.Milliseconds(), listMember(posOf(t))).Err(); err != nil {
				return err
			}
			return r.waitReplicas(ctx, c)
		})
	})
	return r.fail(ctx, "create task", err)
}

func (r *Redis) loadTask(ctx context.Context, c redis.Cmdable, id string) (Task, error) {
	v, err := getRecord(ctx, c, id, r.keys.task(id))
	if err != nil {
		return Task{}, err
	}
	return decodeTask("task record", v)
}

// visibleTask is the scope and expiry check (docs/ARCHITECTURE.md, A foreign
// id answers like an unknown one): anything the
// caller may not see is the bare ErrNotFound.
func (r *Redis) visibleTask(ctx context.Context, c redis.Cmdable, sc Scope, id string) (Task, error) {
	if !sc.Valid() {
		return Task{}, ErrNotFound
	}
	t, err := r.loadTask(ctx, c, id)
	if err != nil {
		return Task{}, err
	}
	if !ownedBy(r.pkey, sc, t.Scope) || t.Expired(r.now()) {
		return Task{}, ErrNotFound
	}
	return t, nil
}

func (r *Redis) GetTask(ctx context.Context, sc Scope, id string) (Task, error) {
	if err := r.enter(ctx); err != nil {
		return Task{}, err
	}
	var t Task
	err := r.retry(ctx, "read task", func(bool) (err error) {
		t, err = r.visibleTask(ctx, r.rdb, sc, id)
		return err
	})
	return t, r.fail(ctx, "read task", err)
}

// mutateTask reads a visible task under WATCH, applies fn and, when fn
// reports a change, writes it back keeping its TTL. The list reads the
// records themselves, so it never disagrees with GetTask (L-52).
func (r *Redis) mutateTask(ctx context.Context, op string, sc Scope, id string,
	fn func(cur Task, now time.Time) (Task, bool, error)) (Task, error) {
	return r.mutateTaskUnsure(ctx, op, sc, id, func(cur Task, now time.Time, _ bool) (Task, bool, error) {
		return fn(cur, now)
	})
}

// mutateTaskUnsure is mutateTask whose fn learns whether an earlier attempt
// may have made its change already.
func (r *Redis) mutateTaskUnsure(ctx context.Context, op string, sc Scope, id string,
	fn func(cur Task, now time.Time, unsure bool) (Task, bool, error)) (Task, error) {
	var out Task
	err := r.watched(ctx, op, func(tx *watchTx) error {
		cur, err := r.visibleTask(ctx, tx, sc, id)
		if err != nil {
			return err
		}
		next, changed, ferr := fn(cur, r.now(), tx.unsure)
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
	return r.AllTasks(ctx, TaskFilter{OwesUpstream: true})
}

// answerTask records input keys as answered (compute applies the shared
// rule and returns the keys fresh for this call). An attempt that may have
// been applied before a failover cut its answer off is told apart from
// another caller's by a claim written in the same MULTI: a key already
// answered whose claim carries this call's nonce was recorded by this call,
// which still sends it (else nobody would); one recorded by someone else
// is theirs (else it would be sent twice).
func (r *Redis) answerTask(ctx context.Context, op string, sc Scope, id string, keys []string,
	compute func(cur Task, now time.Time) (Task, []string, error)) ([]string, error) {
	var nb [16]byte
	_, _ = rand.Read(nb[:])
	nonce := hex.EncodeToString(nb[:])
	var fresh []string
	err := r.watched(ctx, op, func(tx *watchTx) error {
		cur, err := r.visibleTask(ctx, tx, sc, id)
		if err != nil {
			return err
		}
		next, f, err := compute(cur, r.now())
		fresh = slices.Clone(f)
		if err != nil {
			return err
		}
		if tx.unsure {
			for _, k := range keys {
				if slices.Contains(fresh, k) || !slices.Contains(cur.AnsweredKeys, k) {
					continue
				}
				if v, err := tx.Get(ctx, r.keys.answerClaim(id, k)).Result(); err == nil && v == nonce {
					fresh = append(fresh, k)
				}
			}
		}
		if len(f) == 0 {
			return nil
		}
		val, err := encodeTask(next)
		if err != nil {
			return err
		}
		return tx.exec(ctx, func(p redis.Pipeliner) {
			p.SetArgs(ctx, r.keys.task(id), val, redis.SetArgs{KeepTTL: true, Mode: "XX"})
			for _, k := range f {
				p.Set(ctx, r.keys.answerClaim(id, k), nonce, answerClaimTTL)
			}
		})
	}, r.keys.task(id))
	return fresh, err
}

// answerClaimTTL: a claim matters only while the call that wrote it
// retries (at most the failover timeout).
const answerClaimTTL = 10 * time.Minute

func (r *Redis) RecordAnswered(ctx context.Context, sc Scope, id string, keys []string) ([]string, error) {
	fresh, err := r.answerTask(ctx, "record answered input", sc, id, keys, func(cur Task, now time.Time) (Task, []string, error) {
		next, f := recordAnswered(cur, keys, now)
		return next, f, nil
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

func (r *Redis) OweAnswers(ctx context.Context, sc Scope, id string, answers map[string]json.RawMessage) ([]string, error) {
	keys := make([]string, 0, len(answers))
	for k := range answers {
		keys = append(keys, k)
	}
	fresh, err := r.answerTask(ctx, "record owed input answers", sc, id, keys, func(cur Task, now time.Time) (Task, []string, error) {
		return oweAnswers(cur, answers, now)
	})
	if errors.Is(err, ErrNotReplicated) && len(fresh) > 0 {
		// As in RecordAnswered: the caller neither sends these answers nor
		// asks again while they are recorded, so take them back.
		r.forgetAnswered(ctx, sc, id, fresh)
	}
	if err != nil {
		return nil, err
	}
	return fresh, nil
}

func (r *Redis) SettleAnswers(ctx context.Context, sc Scope, id string, keys []string) (Task, error) {
	return r.mutateTask(ctx, "settle owed input answers", sc, id, func(cur Task, now time.Time) (Task, bool, error) {
		next, changed := settleAnswers(cur, keys, now)
		return next, changed, nil
	})
}

// forgetAnswered removes keys from a task's answered set, with any owed
// payloads (best effort).
func (r *Redis) forgetAnswered(ctx context.Context, sc Scope, id string, keys []string) {
	_, err := r.mutateTask(ctx, "take back answered input", sc, id, func(cur Task, now time.Time) (Task, bool, error) {
		next, _ := settleAnswers(cur, keys, now)
		next.AnsweredKeys = slices.DeleteFunc(slices.Clone(cur.AnsweredKeys), func(k string) bool { return slices.Contains(keys, k) })
		return next, len(next.AnsweredKeys) != len(cur.AnsweredKeys), nil
	})
	if err != nil && !errors.Is(err, ErrNotReplicated) {
		r.opt.logger.Warn("sessionmap: cannot take back input answers that did not reach the Redis replicas; "+
			"they will not be sent again", "redis", r.addr, "err", err)
	}
}

func (r *Redis) ListTasks(ctx context.Context, sc Scope, pageSize int, cursor string) (Page, error) {
	return r.listTasks(ctx, sc, pageSize, cursor, listView)
}

// ListTasksFull costs what ListTasks costs: the list reads the records
// themselves already (one ZRANGEBYLEX on the scope's slot, then one
// pipeline of GETs for the page, split by node on a Cluster).
func (r *Redis) ListTasksFull(ctx context.Context, sc Scope, pageSize int, cursor string) (Page, error) {
	return r.listTasks(ctx, sc, pageSize, cursor, func(t Task) Task { return t })
}

func (r *Redis) listTasks(ctx context.Context, sc Scope, pageSize int, cursor string, view func(Task) Task) (Page, error) {
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
		var members []string
		err := r.retry(ctx, "list tasks", func(bool) error {
			var err error
			members, err = r.rdb.ZRangeByLex(ctx, listKey, &redis.ZRangeBy{Min: from, Max: "+", Count: batch}).Result()
			return err
		})
		if err != nil {
			return Page{}, r.fail(ctx, "list tasks", err)
		}
		if len(members) == 0 {
			return page, nil
		}
		keys := make([]string, len(members))
		for i, m := range members {
			keys[i] = r.keys.task(memberID(m))
		}
		vals, err := r.getMany(ctx, "list tasks", keys)
		if err != nil {
			return Page{}, r.fail(ctx, "list tasks", err)
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
			page.Tasks = append(page.Tasks, view(t))
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

// getMany reads keys that may be in different slots: one pipeline of GETs,
// which the Cluster client splits by node (MGET would be refused with
// CROSSSLOT). A missing key is nil.
func (r *Redis) getMany(ctx context.Context, op string, keys []string) ([]any, error) {
	out := make([]any, len(keys))
	err := r.retry(ctx, op, func(bool) error {
		cmds := make([]*redis.StringCmd, len(keys))
		_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range keys {
				cmds[i] = p.Get(ctx, k)
			}
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		for i, c := range cmds {
			out[i] = nil
			if c.Err() == nil {
				out[i] = c.Val()
			}
		}
		return nil
	})
	return out, err
}

func (r *Redis) DeleteSessionTasks(ctx context.Context, sc Scope) (int, error) {
	if err := r.enter(ctx); err != nil {
		return 0, err
	}
	if err := r.writable(); err != nil {
		return 0, err
	}
	ownerKey, listKey := r.keys.owner(sc), r.keys.list(sc)
	var members []string
	err := r.retry(ctx, "delete session tasks", func(bool) error {
		var err error
		members, err = r.rdb.SMembers(ctx, ownerKey).Result()
		return err
	})
	if err != nil {
		return 0, r.fail(ctx, "delete session tasks", err)
	}
	if len(members) == 0 {
		return 0, nil
	}
	ms := make([]any, len(members))
	for i, m := range members {
		ms[i] = m
	}
	n := 0
	// Only the members read above: a task created meanwhile stays indexed.
	// The records are in their tasks' slots, so they go first, one DEL
	// each (a retry counts only what it deleted itself); the index entries
	// (the scope's slot) after them, in one MULTI. A failure in between
	// leaves index entries without records, which lists skip and prune.
	err = r.retry(ctx, "delete session tasks", func(bool) error {
		dels := make([]*redis.IntCmd, len(members))
		_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, m := range members {
				dels[i] = p.Del(ctx, r.keys.task(memberID(m)))
			}
			return nil
		})
		for _, d := range dels {
			if d.Err() == nil {
				n += int(d.Val())
			}
		}
		if err != nil {
			return err
		}
		return r.onConn(ctx, listKey, func(c *redis.Tx) error {
			if _, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.ZRem(ctx, listKey, ms...)
				p.SRem(ctx, ownerKey, ms...)
				return nil
			}); err != nil {
				return err
			}
			return r.waitReplicas(ctx, c)
		})
	})
	return n, r.fail(ctx, "delete session tasks", err)
}

// --- admin (operator view across scopes) ---

// scanValues returns the values of every key matching pattern: SCAN on
// every primary (a Cluster's keys are spread over its nodes), then GETs in
// batches; keys that vanish meanwhile are skipped.
func (r *Redis) scanValues(ctx context.Context, pattern string, fn func(key, val string)) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	var mu sync.Mutex
	var keys []string
	scan := func(ctx context.Context, c redis.Cmdable) error {
		it := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for it.Next(ctx) {
			mu.Lock()
			keys = append(keys, it.Val())
			mu.Unlock()
		}
		return it.Err()
	}
	err := r.retry(ctx, "scan", func(bool) error {
		keys = keys[:0]
		if cc, ok := r.rdb.(*redis.ClusterClient); ok {
			return cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return scan(ctx, c) })
		}
		return scan(ctx, r.rdb)
	})
	if err != nil {
		return err
	}
	slices.Sort(keys)
	keys = slices.Compact(keys) // SCAN may return a key twice
	for len(keys) > 0 {
		batch := keys[:min(1000, len(keys))]
		keys = keys[len(batch):]
		vals, err := r.getMany(ctx, "scan", batch)
		if err != nil {
			return err
		}
		for i, v := range vals {
			if s, ok := v.(string); ok {
				fn(batch[i], s)
			}
		}
	}
	return nil
}

func (r *Redis) AllSessions(ctx context.Context) ([]Session, error) {
	var out []Session
	var bad []error
	now := r.now()
	err := r.scanValues(ctx, r.keys.sessionPattern(), func(key, val string) {
		s, err := decodeSession(fmt.Sprintf("session %q", r.keys.stripSession(key)), []byte(val))
		if err != nil {
			bad = append(bad, err)
			return
		}
		if !sessionExpired(s, now) {
			out = append(out, s)
		}
	})
	if err != nil {
		return nil, r.fail(ctx, "list sessions", err)
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
		return nil, r.fail(ctx, "list tasks", err)
	}
	slices.SortFunc(out, newerFirst)
	return out, errors.Join(bad...)
}

func (r *Redis) LookupSession(ctx context.Context, id string) (Session, error) {
	if err := r.enter(ctx); err != nil {
		return Session{}, err
	}
	var s Session
	err := r.retry(ctx, "read session", func(bool) (err error) {
		s, err = r.loadSession(ctx, r.rdb, id)
		return err
	})
	if err == nil && sessionExpired(s, r.now()) {
		err = ErrNotFound
	}
	return s, r.fail(ctx, "read session", err)
}

func (r *Redis) LookupTask(ctx context.Context, id string) (Task, error) {
	if err := r.enter(ctx); err != nil {
		return Task{}, err
	}
	var t Task
	err := r.retry(ctx, "read task", func(bool) (err error) {
		t, err = r.loadTask(ctx, r.rdb, id)
		return err
	})
	if err == nil && t.Expired(r.now()) {
		err = ErrNotFound
	}
	return t, r.fail(ctx, "read task", err)
}
