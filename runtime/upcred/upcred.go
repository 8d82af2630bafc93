// Package upcred keeps the freshest upstream credential of each principal,
// so that work the bridge does on a principal's behalf long after the
// request that started it (the watchers polling a task, the outbox
// delivering an owed cancel or answer, the modern face's pooled upstream
// sessions) calls the upstream with the credential the client sent last,
// not the one it had when the task began: access tokens live minutes,
// tasks live hours.
//
// Every authenticated request hands its credential to Observe; an
// unchanged credential costs a map lookup and a string compare. A changed
// one is kept in memory and, when the keeper has a store and a sealing key,
// written sealed to the store (the freshest wins there too) and announced
// to the other replicas over the coordinator's fan-out, so a refresh on one
// replica reaches the watchers on all of them at once (and within
// RecheckEvery without the fan-out). Without a key the credential stays in
// this process's memory only: after a restart, or on another replica, the
// principal's tasks wait for the client's next request.
//
// Current returns the freshest usable credential: from memory first, from
// the store when memory has none that is usable (expired, or refused by the
// upstream with 401, see Refused). When none is usable the principal is
// "exhausted": the callers stop using the upstream for it and tell waiting
// clients to come back with a fresh token; OnFresh fires when one arrives.
//
// Credentials never reach a log, a metric or an error text.
package upcred

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/runtime/coord"
	"github.com/tasksbridge/tasksbridge/runtime/credseal"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// Defaults of Config.
const (
	// DefaultLifetime is how long a credential of unknown expiry (an
	// opaque token) is kept after it was last seen; it is renewed while
	// the client keeps sending it.
	DefaultLifetime = 12 * time.Hour
	// DefaultRecheckEvery bounds how often the store is read again for an
	// exhausted principal (so a refresh on another replica is found even
	// when its fan-out message was lost).
	DefaultRecheckEvery = 5 * time.Second
)

// Topic is the fan-out topic on which replicas announce that a
// principal's credential changed; a message is the principal's id (a
// digest), never the credential.
const Topic = "upcred:fresh"

// Config configures a Keeper.
type Config struct {
	// Upstream names the upstream (URL or command): part of the record's
	// owner and of the sealing's additional data.
	Upstream string
	// Store keeps sealed credentials for other replicas and restarts; nil:
	// memory only.
	Store sessionmap.CredentialStore
	// Sealer seals what goes to Store; nil: memory only (Store unused).
	Sealer *credseal.Sealer
	// Fanout announces changes to the other replicas (nil: they find them
	// within RecheckEvery when they need them).
	Fanout coord.Fanout
	// OnFresh is called (on its own goroutine, never with a lock held)
	// when a principal that was exhausted (see Exhausted) has a usable
	// credential again: from a request here, or from the store after
	// another replica's announcement.
	OnFresh func(principal string)
	// Lifetime is DefaultLifetime when zero.
	Lifetime time.Duration
	// RecheckEvery is DefaultRecheckEvery when zero.
	RecheckEvery time.Duration
	// Clock defaults to time.Now.
	Clock func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Keeper keeps the credentials of one upstream. Safe for concurrent use;
// the nil *Keeper keeps nothing (Current answers "no credential").
type Keeper struct {
	cfg    Config
	stored bool // Store and Sealer both set

	mu        sync.Mutex
	slots     map[string]*slot // by principal
	listeners []func(principal string)
	swept     time.Time

	stop context.CancelFunc
	wg   sync.WaitGroup
}

type slot struct {
	cur       cred
	refused   map[[32]byte]bool // digests of values the upstream refused
	checked   time.Time         // last store read
	exhausted bool              // the last Current found nothing usable
}

type cred struct {
	value   string
	expires time.Time // zero: unknown (kept for Lifetime after seen)
	seen    time.Time // when this process last saw it (observed or read)
	written time.Time // the store's record's write time (zero: not stored)
}

func digest(v string) [32]byte { return sha256.Sum256([]byte("tasksbridge/upcred\x00" + v)) }

// New returns a Keeper; Start it to hear other replicas' announcements.
func New(cfg Config) *Keeper {
	if cfg.Lifetime <= 0 {
		cfg.Lifetime = DefaultLifetime
	}
	if cfg.RecheckEvery <= 0 {
		cfg.RecheckEvery = DefaultRecheckEvery
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Keeper{cfg: cfg, stored: cfg.Store != nil && cfg.Sealer != nil, slots: map[string]*slot{}}
}

// Shared reports whether credentials reach the store (other replicas,
// restarts), rather than this process's memory only.
func (k *Keeper) Shared() bool { return k != nil && k.stored }

// Start subscribes to the other replicas' announcements (when the keeper
// has a fan-out and a store) until Close.
func (k *Keeper) Start(ctx context.Context) error {
	if k == nil || k.cfg.Fanout == nil || !k.stored {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	msgs, unsub, err := k.cfg.Fanout.Subscribe(ctx, Topic)
	if err != nil {
		cancel()
		return err
	}
	k.stop = cancel
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		defer unsub()
		for {
			select {
			case m, ok := <-msgs:
				if !ok {
					return
				}
				if m == nil {
					k.forgetChecks() // messages may have been missed
					continue
				}
				var a announcement
				if json.Unmarshal(m, &a) != nil || a.Upstream != k.cfg.Upstream || a.Principal == "" {
					continue
				}
				k.reload(ctx, a.Principal)
			case <-ctx.Done():
				return
			}
		}
	}()
	return nil
}

// Close stops Start's subscription.
func (k *Keeper) Close() {
	if k == nil || k.stop == nil {
		return
	}
	k.stop()
	k.wg.Wait()
}

type announcement struct {
	Principal string `json:"p"`
	Upstream  string `json:"u"`
}

// sweepEvery bounds how often slots whose credential expired are dropped.
const sweepEvery = time.Minute

// sweepLocked drops, at most once per sweepEvery, the slots whose
// credential's record has expired (a principal that comes back starts
// afresh), so memory follows the principals of the last Lifetime.
func (k *Keeper) sweepLocked(now time.Time) {
	if now.Sub(k.swept) < sweepEvery {
		return
	}
	k.swept = now
	for p, s := range k.slots {
		if s.cur.value == "" || !now.Before(k.recordExpiry(s.cur)) {
			delete(k.slots, p)
		}
	}
}

func (k *Keeper) slotLocked(principal string) *slot {
	s := k.slots[principal]
	if s == nil {
		s = &slot{refused: map[[32]byte]bool{}}
		k.slots[principal] = s
	}
	return s
}

// usable reports whether c can be sent at now.
func (s *slot) usable(c cred, now time.Time, lifetime time.Duration) bool {
	if c.value == "" || s.refused[digest(c.value)] {
		return false
	}
	if !c.expires.IsZero() {
		return now.Before(c.expires)
	}
	return now.Before(c.seen.Add(lifetime))
}

// recordExpiry is when c's record goes: its expiry, or Lifetime after it
// was seen when its expiry is unknown.
func (k *Keeper) recordExpiry(c cred) time.Time {
	if !c.expires.IsZero() {
		return c.expires
	}
	return c.seen.Add(k.cfg.Lifetime)
}

// Observe records that a request of principal carried authorization (its
// Authorization header value), valid until expires (zero: unknown; see
// ExpiryOf). An unchanged credential costs no store write, except once
// per half Lifetime for one of unknown expiry (to keep its record).
func (k *Keeper) Observe(ctx context.Context, principal, authorization string, expires time.Time) {
	if k == nil || principal == "" || strings.TrimSpace(authorization) == "" {
		return
	}
	now := k.cfg.Clock()
	k.mu.Lock()
	k.sweepLocked(now)
	s := k.slotLocked(principal)
	if s.cur.value == authorization {
		// Seen again: usable as long as the client keeps sending it (an
		// opaque token has no expiry of its own), and vouched for by the
		// client even after a refusal (its own request goes upstream with
		// it and would be refused there).
		s.cur.seen = now
		longer := expires.After(s.cur.expires)
		if longer {
			s.cur.expires = expires
		}
		delete(s.refused, digest(authorization))
		wasExhausted := s.exhausted
		s.exhausted = false
		renew := k.stored && (longer || (s.cur.expires.IsZero() && now.Sub(s.cur.written) > k.cfg.Lifetime/2))
		if renew {
			s.cur.written = now // tried now; a failed write is tried again in Lifetime/2
		}
		c := s.cur
		k.mu.Unlock()
		if renew {
			k.put(ctx, principal, c)
		}
		if wasExhausted {
			k.fresh(principal)
		}
		return
	}
	next := cred{value: authorization, expires: expires, seen: now, written: now}
	old := s.cur
	// In memory as in the store, the freshest wins: a request carrying an
	// older credential (a second client of the principal, a retried
	// request) does not displace a newer one that is still usable.
	if s.usable(old, now, k.cfg.Lifetime) && k.recordExpiry(old).After(k.recordExpiry(next)) {
		k.mu.Unlock()
		return
	}
	delete(s.refused, digest(authorization))
	s.cur = next
	wasExhausted := s.exhausted
	s.exhausted = false
	k.mu.Unlock()
	k.put(ctx, principal, next)
	if wasExhausted {
		k.fresh(principal)
	}
}

// put writes c sealed to the store and announces it.
func (k *Keeper) put(ctx context.Context, principal string, c cred) {
	if !k.stored {
		return
	}
	sealed, err := k.cfg.Sealer.Seal([]byte(c.value), principal, k.cfg.Upstream)
	if err != nil {
		k.cfg.Logger.Warn("cannot seal a client's upstream credential; other replicas will wait for its next request", "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, stored, err := k.cfg.Store.PutCredential(ctx, sessionmap.Credential{
		Principal: principal, Upstream: k.cfg.Upstream, Sealed: sealed, Expires: k.recordExpiry(c)})
	if err != nil {
		k.cfg.Logger.Warn("cannot store a client's upstream credential; other replicas will wait for its next request", "err", err)
		return
	}
	if stored {
		if k.cfg.Fanout != nil {
			msg, _ := json.Marshal(announcement{Principal: principal, Upstream: k.cfg.Upstream})
			_ = k.cfg.Fanout.Publish(ctx, Topic, msg)
		}
	}
}

func (k *Keeper) fresh(principal string) {
	k.mu.Lock()
	fs := append([]func(string){}, k.listeners...)
	k.mu.Unlock()
	if f := k.cfg.OnFresh; f != nil {
		fs = append(fs, f)
	}
	for _, f := range fs {
		go f(principal)
	}
}

// Notify adds f to the functions called like Config.OnFresh (the faces
// sharing one keeper each register theirs).
func (k *Keeper) Notify(f func(principal string)) {
	if k == nil || f == nil {
		return
	}
	k.mu.Lock()
	k.listeners = append(k.listeners, f)
	k.mu.Unlock()
}

// Upstream names the keeper's upstream.
func (k *Keeper) Upstream() string {
	if k == nil {
		return ""
	}
	return k.cfg.Upstream
}

// Current returns the freshest usable credential of principal: the one in
// memory when it is usable, else the store's (read at most once per
// RecheckEvery while nothing usable is found). ok is false when there is
// none: every credential the bridge has for principal expired or was
// refused (Exhausted is then true), or it never had one.
func (k *Keeper) Current(ctx context.Context, principal string) (authorization string, ok bool) {
	if k == nil || principal == "" {
		return "", false
	}
	now := k.cfg.Clock()
	k.mu.Lock()
	s := k.slotLocked(principal)
	if s.usable(s.cur, now, k.cfg.Lifetime) {
		v := s.cur.value
		k.mu.Unlock()
		return v, true
	}
	read := k.stored && (s.checked.IsZero() || now.Sub(s.checked) >= k.cfg.RecheckEvery)
	if read {
		s.checked = now
	}
	k.mu.Unlock()
	if read {
		k.load(ctx, principal)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	s = k.slotLocked(principal)
	if s.usable(s.cur, k.cfg.Clock(), k.cfg.Lifetime) {
		s.exhausted = false
		return s.cur.value, true
	}
	if !s.exhausted && s.cur.value != "" {
		k.cfg.Logger.Info("every upstream credential the bridge holds for a client has expired or was refused; its tasks pause until the client sends a request with a fresh token",
			"upstream", k.cfg.Upstream)
	}
	s.exhausted = s.cur.value != "" || len(s.refused) > 0
	return "", false
}

// load reads principal's record from the store and adopts it when it is
// usable and fresher than (or replaces an unusable) memory; it reports
// whether it adopted a new credential.
func (k *Keeper) load(ctx context.Context, principal string) bool {
	if !k.stored {
		return false
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	rec, err := k.cfg.Store.GetCredential(ctx, principal, k.cfg.Upstream)
	if err != nil {
		if !errors.Is(err, sessionmap.ErrNotFound) {
			k.cfg.Logger.Warn("cannot read a client's upstream credential from the store", "err", err)
		}
		return false
	}
	pt, err := k.cfg.Sealer.Open(rec.Sealed, principal, k.cfg.Upstream)
	if err != nil {
		// Another key (not rotated in here yet), or a record moved or
		// damaged: unusable, and said so once per read.
		k.cfg.Logger.Warn("a stored upstream credential cannot be opened with this bridge's credential key (is --credential-key-file the same on every replica?)")
		return false
	}
	now := k.cfg.Clock()
	c := cred{value: string(pt), expires: rec.Expires, seen: now, written: rec.WrittenAt}
	k.mu.Lock()
	s := k.slotLocked(principal)
	if c.value == s.cur.value || s.refused[digest(c.value)] {
		k.mu.Unlock()
		return false
	}
	if s.usable(s.cur, now, k.cfg.Lifetime) && !k.recordExpiry(c).After(k.recordExpiry(s.cur)) {
		k.mu.Unlock()
		return false
	}
	s.cur = c
	wasExhausted := s.exhausted
	s.exhausted = false
	k.mu.Unlock()
	if wasExhausted {
		k.fresh(principal)
	}
	return true
}

// reload reads principal's record after another replica announced a
// change (only for principals this process knows).
func (k *Keeper) reload(ctx context.Context, principal string) {
	k.mu.Lock()
	_, known := k.slots[principal]
	k.mu.Unlock()
	if known {
		k.load(ctx, principal)
	}
}

func (k *Keeper) forgetChecks() {
	k.mu.Lock()
	for _, s := range k.slots {
		s.checked = time.Time{}
	}
	k.mu.Unlock()
}

// Refused records that the upstream answered a request of principal made
// with authorization with HTTP 401: that value is not used again until the
// client presents it again. The next Current reads the store at once.
func (k *Keeper) Refused(principal, authorization string) {
	if k == nil || principal == "" || authorization == "" {
		return
	}
	k.mu.Lock()
	s := k.slotLocked(principal)
	s.refused[digest(authorization)] = true
	s.checked = time.Time{}
	k.mu.Unlock()
}

// Exhausted reports whether principal's last Current found no usable
// credential and none arrived since (callers tell waiting clients to come
// back with a fresh token). It reads no store.
func (k *Keeper) Exhausted(principal string) bool {
	if k == nil || principal == "" {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	s := k.slots[principal]
	if s == nil {
		return false
	}
	if s.exhausted && s.usable(s.cur, k.cfg.Clock(), k.cfg.Lifetime) {
		s.exhausted = false
	}
	return s.exhausted
}

// HasNewer reports whether this process holds a usable credential of
// principal that the store does not (so another replica, reading the
// store, may not have seen it). Without a store it answers true when a
// usable credential is held: nothing says the others have it.
func (k *Keeper) HasNewer(ctx context.Context, principal string) bool {
	if k == nil || principal == "" {
		return false
	}
	now := k.cfg.Clock()
	k.mu.Lock()
	s := k.slots[principal]
	var c cred
	ok := s != nil && s.usable(s.cur, now, k.cfg.Lifetime)
	if ok {
		c = s.cur
	}
	k.mu.Unlock()
	if !ok {
		return false
	}
	if !k.stored {
		return true
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	rec, err := k.cfg.Store.GetCredential(ctx, principal, k.cfg.Upstream)
	if err != nil {
		return true
	}
	pt, err := k.cfg.Sealer.Open(rec.Sealed, principal, k.cfg.Upstream)
	if err != nil || string(pt) != c.value {
		return err != nil || k.recordExpiry(c).After(rec.Expires)
	}
	return false
}

// ExpiryOf returns the expiry a bearer JWT claims (its exp), zero for any
// other credential. The token is NOT verified: the upstream judges it; the
// bridge only uses the claim to order a principal's credentials and to let
// its copy go when the credential would be refused anyway.
func ExpiryOf(authorization string) time.Time {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(authorization), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return time.Time{}
	}
	parts := strings.Split(strings.TrimSpace(tok), ".")
	if len(parts) != 3 || len(parts[1]) > 8<<10 {
		return time.Time{}
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		Exp json.Number `json:"exp"`
	}
	if json.Unmarshal(raw, &claims) != nil || claims.Exp == "" {
		return time.Time{}
	}
	f, err := claims.Exp.Float64()
	if err != nil || f <= 0 || f > 1e11 {
		return time.Time{}
	}
	return time.Unix(0, int64(f*1e9)).UTC()
}
