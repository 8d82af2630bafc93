package sessionmap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/redis/go-redis/v9"

	"github.com/tasksbridge/tasksbridge/era"
)

// The upstream's remembered era (Store.UpstreamEra, SetUpstreamEra): one
// record per upstream, named by a digest of the upstream's name so a key
// shows no URL. It is the bridge's own state, not a session: no client
// scope reaches it and the session views do not list it. Bridges that share
// a store share it, so a replica started while the upstream is down still
// routes each client to the right face (M-08: the era MAY be persisted).

// upstreamEraRecord is the stored value (JSON; version 1).
type upstreamEraRecord struct {
	V         int       `json:"v"`
	Upstream  string    `json:"upstream"`
	Era       era.Era   `json:"era"`
	SetAt     time.Time `json:"setAt"`
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
}

func (r upstreamEraRecord) expired(now time.Time) bool {
	return !r.ExpiresAt.IsZero() && !now.Before(r.ExpiresAt)
}

func upstreamEraID(upstream string) [32]byte {
	return sha256.Sum256([]byte("tasksbridge/sessionmap/upstream-era\x00" + upstream))
}

func prepareUpstreamEra(upstream string, e era.Era, ttl time.Duration, now time.Time) (upstreamEraRecord, error) {
	switch {
	case upstream == "":
		return upstreamEraRecord{}, invalid("an upstream era needs the upstream's name")
	case !e.Valid():
		return upstreamEraRecord{}, invalid("upstream era %q: want legacy or modern", e)
	case ttl < 0:
		return upstreamEraRecord{}, invalid("negative lifetime %v for an upstream era", ttl)
	}
	r := upstreamEraRecord{V: 1, Upstream: upstream, Era: e, SetAt: now.UTC()}
	if ttl > 0 {
		r.ExpiresAt = r.SetAt.Add(ttl)
	}
	return r, nil
}

// decodeUpstreamEra reads a record stored under upstream's key; one that
// does not decode, or names another upstream, counts as absent (it is
// overwritten by the next set).
func decodeUpstreamEra(b []byte, upstream string) (upstreamEraRecord, bool) {
	var r upstreamEraRecord
	if json.Unmarshal(b, &r) != nil || r.V != 1 || r.Upstream != upstream || !r.Era.Valid() {
		return upstreamEraRecord{}, false
	}
	return r, true
}

// --- Memory ---

// eraTable is Memory's upstream eras (its zero value is ready).
type eraTable struct {
	mu sync.Mutex
	m  map[string]upstreamEraRecord
}

// UpstreamEra implements Store.
func (m *Memory) UpstreamEra(ctx context.Context, upstream string) (era.Era, time.Time, error) {
	if err := ctx.Err(); err != nil {
		return era.Unknown, time.Time{}, err
	}
	m.eras.mu.Lock()
	defer m.eras.mu.Unlock()
	r, ok := m.eras.m[upstream]
	if !ok || r.expired(m.now()) {
		return era.Unknown, time.Time{}, ErrNotFound
	}
	return r.Era, r.SetAt, nil
}

// SetUpstreamEra implements Store.
func (m *Memory) SetUpstreamEra(ctx context.Context, upstream string, e era.Era, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r, err := prepareUpstreamEra(upstream, e, ttl, m.now())
	if err != nil {
		return err
	}
	m.eras.mu.Lock()
	defer m.eras.mu.Unlock()
	if m.eras.m == nil {
		m.eras.m = map[string]upstreamEraRecord{}
	}
	m.eras.m[upstream] = r
	return nil
}

// --- Badger ---

// upstreamEraKey is e/<digest of the upstream> (see the key layout in
// badger.go). A record with a lifetime carries the Badger TTL of its
// expiry; reads check the expiry at the injected clock too.
func upstreamEraKey(upstream string) []byte {
	id := upstreamEraID(upstream)
	return append([]byte("e/"), id[:]...)
}

// UpstreamEra implements Store.
func (b *Badger) UpstreamEra(ctx context.Context, upstream string) (era.Era, time.Time, error) {
	done, err := b.enter(ctx)
	if err != nil {
		return era.Unknown, time.Time{}, err
	}
	defer done()
	var r upstreamEraRecord
	have := false
	err = b.view(func(txn *badger.Txn) error {
		v, err := getValue(txn, upstreamEraKey(upstream))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		r, have = decodeUpstreamEra(v, upstream)
		return nil
	})
	if err != nil {
		return era.Unknown, time.Time{}, fmt.Errorf("sessionmap: get upstream era: %w", err)
	}
	if !have || r.expired(b.now()) {
		return era.Unknown, time.Time{}, ErrNotFound
	}
	return r.Era, r.SetAt, nil
}

// SetUpstreamEra implements Store.
func (b *Badger) SetUpstreamEra(ctx context.Context, upstream string, e era.Era, ttl time.Duration) error {
	done, err := b.enter(ctx)
	if err != nil {
		return err
	}
	defer done()
	now := b.now()
	r, err := prepareUpstreamEra(upstream, e, ttl, now)
	if err != nil {
		return err
	}
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	err = b.update(ctx, func(txn *wtxn) error {
		return setWithExpiry(txn, upstreamEraKey(upstream), v, b.physicalExpiry(r.ExpiresAt, now))
	})
	if err != nil {
		return fmt.Errorf("sessionmap: set upstream era: %w", err)
	}
	return nil
}

// --- Redis ---

// upstreamEra is P:meta:upstream-era:<digest of the upstream>, a string
// holding the record, with a Redis TTL at its expiry when it has one.
// Writes do not WAIT for replicas: an era lost in a failover only costs
// one probe of the upstream.
func (k redisKeys) upstreamEra(upstream string) string {
	id := upstreamEraID(upstream)
	return k.base + "meta:upstream-era:" + hex.EncodeToString(id[:16])
}

// UpstreamEra implements Store.
func (r *Redis) UpstreamEra(ctx context.Context, upstream string) (era.Era, time.Time, error) {
	if err := r.enter(ctx); err != nil {
		return era.Unknown, time.Time{}, err
	}
	var v []byte
	err := r.retry(ctx, "get upstream era", func(bool) (err error) {
		v, err = r.rdb.Get(ctx, r.keys.upstreamEra(upstream)).Bytes()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return era.Unknown, time.Time{}, ErrNotFound
	}
	if err != nil {
		return era.Unknown, time.Time{}, r.fail(ctx, "get upstream era", err)
	}
	rec, ok := decodeUpstreamEra(v, upstream)
	if !ok || rec.expired(r.now()) {
		return era.Unknown, time.Time{}, ErrNotFound
	}
	return rec.Era, rec.SetAt, nil
}

// SetUpstreamEra implements Store.
func (r *Redis) SetUpstreamEra(ctx context.Context, upstream string, e era.Era, ttl time.Duration) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	if err := r.writable(); err != nil {
		return err
	}
	now := r.now()
	rec, err := prepareUpstreamEra(upstream, e, ttl, now)
	if err != nil {
		return err
	}
	v, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	err = r.retry(ctx, "set upstream era", func(bool) error {
		return r.rdb.Set(ctx, r.keys.upstreamEra(upstream), v, ttlUntil(rec.ExpiresAt, now)).Err()
	})
	if err != nil {
		return r.fail(ctx, "set upstream era", err)
	}
	return nil
}
