package sessionmap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Intent is the record a face writes before it sends a task-creating call
// upstream: if the upstream's answer is lost (a reset after the upstream
// created the task, the process killed, a stop past the shutdown timeout),
// the intent stays and `bridge tasks orphans` reports the task the
// upstream may be running for nobody. It carries no arguments and no
// credential: the tool's name, who asked and when.
//
// ID is the local task id the face chose before the call: once the task
// record is written under the same id the intent is settled, whether or not
// its deletion (done after the answer, off the client's path) made it to
// disk. An intent whose task record exists is therefore never an orphan.
type Intent struct {
	ID        string    `json:"id"`
	Scope     Scope     `json:"scope"`
	Upstream  string    `json:"upstream,omitempty"`
	RequestID string    `json:"requestId,omitempty"`
	ToolName  string    `json:"tool,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	// UpstreamTaskID is set when the upstream's task id arrived but the
	// task could not be handed to a client (its record could not be
	// written); Outcome then says what the bridge did about it.
	UpstreamTaskID string `json:"upstreamTaskId,omitempty"`
	// Outcome is "" (the answer never came), IntentCancelled (tasks/cancel
	// taken by the upstream) or IntentCancelFailed.
	Outcome string `json:"outcome,omitempty"`
}

// Intent outcomes.
const (
	IntentCancelled    = "cancelled"
	IntentCancelFailed = "cancel-failed"
)

// IntentTTL is how long an intent record is kept: long enough for an
// operator to see an orphan after a weekend, short enough that the records
// of crashed creates do not pile up.
const IntentTTL = 7 * 24 * time.Hour

// IntentStore is the optional part of a Store that keeps intents. It is a
// separate interface, not part of Store, so that other Store
// implementations keep compiling; the faces type-assert it and, without
// it, write no intents. Memory, Badger and Redis implement it.
type IntentStore interface {
	// PutIntent stores in (replacing the record of the same id), durably,
	// and in the same write deletes the intents settled (their task
	// records are written): the deletions ride on a write the create path
	// makes anyway, so settling costs no store round of its own. Zero
	// CreatedAt is now. The record expires IntentTTL after CreatedAt.
	PutIntent(ctx context.Context, in Intent, settled ...string) error
	// DeleteIntents removes the intents ids; unknown ids are not an error.
	DeleteIntents(ctx context.Context, ids ...string) error
	// AllIntents returns every unexpired intent, oldest first (read-only:
	// `bridge tasks orphans`).
	AllIntents(ctx context.Context) ([]Intent, error)
}

var (
	_ IntentStore = (*Memory)(nil)
	_ IntentStore = (*Badger)(nil)
	_ IntentStore = (*Redis)(nil)
)

func prepareIntent(in Intent, now time.Time) (Intent, error) {
	if in.ID == "" || strings.ContainsAny(in.ID, "{}") || len(in.ID) > 256 {
		return in, invalid("an intent record needs a task id")
	}
	if in.CreatedAt.IsZero() {
		in.CreatedAt = now
	}
	in.CreatedAt = in.CreatedAt.UTC()
	return in, nil
}

func (in Intent) expires() time.Time { return in.CreatedAt.Add(IntentTTL) }

func (in Intent) expired(now time.Time) bool { return !now.Before(in.expires()) }

func decodeIntent(v []byte) (Intent, error) {
	var in Intent
	if err := json.Unmarshal(v, &in); err != nil || in.ID == "" {
		return Intent{}, fmt.Errorf("%w: intent record", ErrCorrupt)
	}
	return in, nil
}

func olderFirst(a, b Intent) int {
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// --- Memory ---

// intentTable is Memory's intents (its zero value is ready).
type intentTable struct {
	mu sync.Mutex
	m  map[string]Intent
}

// PutIntent implements IntentStore.
func (m *Memory) PutIntent(ctx context.Context, in Intent, settled ...string) error {
	now := m.now()
	in, err := prepareIntent(in, now)
	if err != nil {
		return err
	}
	m.intents.mu.Lock()
	defer m.intents.mu.Unlock()
	for k, old := range m.intents.m {
		if old.expired(now) {
			delete(m.intents.m, k)
		}
	}
	if m.intents.m == nil {
		m.intents.m = map[string]Intent{}
	}
	for _, id := range settled {
		delete(m.intents.m, id)
	}
	m.intents.m[in.ID] = in
	return nil
}

// DeleteIntents implements IntentStore.
func (m *Memory) DeleteIntents(ctx context.Context, ids ...string) error {
	m.intents.mu.Lock()
	defer m.intents.mu.Unlock()
	for _, id := range ids {
		delete(m.intents.m, id)
	}
	return nil
}

// AllIntents implements IntentStore.
func (m *Memory) AllIntents(ctx context.Context) ([]Intent, error) {
	now := m.now()
	m.intents.mu.Lock()
	var out []Intent
	for _, in := range m.intents.m {
		if !in.expired(now) {
			out = append(out, in)
		}
	}
	m.intents.mu.Unlock()
	slices.SortFunc(out, olderFirst)
	return out, nil
}

// --- Badger ---

// intentKey is u/<task id> (see the key layout in badger.go). The record
// carries a Badger TTL at its expiry, so it goes by itself.
func intentKey(id string) []byte { return append([]byte("u/"), id...) }

// PutIntent implements IntentStore.
func (b *Badger) PutIntent(ctx context.Context, in Intent, settled ...string) error {
	done, err := b.enter(ctx)
	if err != nil {
		return err
	}
	defer done()
	now := b.now()
	if in, err = prepareIntent(in, now); err != nil {
		return err
	}
	v, err := json.Marshal(in)
	if err != nil {
		return err
	}
	err = b.update(ctx, func(txn *wtxn) error {
		for _, id := range settled {
			if id != in.ID {
				if err := txn.Delete(intentKey(id)); err != nil {
					return err
				}
			}
		}
		return setWithExpiry(txn, intentKey(in.ID), v, b.physicalExpiry(in.expires(), now))
	})
	if err != nil {
		return fmt.Errorf("sessionmap: put intent: %w", err)
	}
	return nil
}

// DeleteIntents implements IntentStore.
func (b *Badger) DeleteIntents(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	done, err := b.enter(ctx)
	if err != nil {
		return err
	}
	defer done()
	err = b.update(ctx, func(txn *wtxn) error {
		for _, id := range ids {
			if err := txn.Delete(intentKey(id)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sessionmap: delete intent: %w", err)
	}
	return nil
}

// AllIntents implements IntentStore.
func (b *Badger) AllIntents(ctx context.Context) ([]Intent, error) {
	out, err := badgerScan(ctx, b, "u/", "intents", func(_, v []byte) (Intent, error) { return decodeIntent(v) },
		func(in Intent, now time.Time) bool { return !in.expired(now) })
	slices.SortFunc(out, olderFirst)
	return out, err
}

// --- Redis ---

// Intent records in Redis: <prefix>u:{<task id>}, a string holding the
// JSON record, with a Redis TTL at its expiry. The hash tag is the task id,
// as for the task record, so both live in one Cluster slot.
func (k redisKeys) intent(id string) string { return k.base + "u:{" + id + "}" }
func (k redisKeys) intentPattern() string   { return k.base + "u:{*" }

// PutIntent implements IntentStore.
func (r *Redis) PutIntent(ctx context.Context, in Intent, settled ...string) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	if err := r.writable(); err != nil {
		return err
	}
	now := r.now()
	in, err := prepareIntent(in, now)
	if err != nil {
		return err
	}
	v, err := json.Marshal(in)
	if err != nil {
		return err
	}
	// One round trip: a plain pipeline, not MULTI, since the keys hash to
	// different Cluster slots; the deletions need no atomicity (a settled
	// intent left behind is still settled by its task record).
	err = r.retry(ctx, "put intent", func(bool) error {
		_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, id := range settled {
				if id != in.ID {
					p.Del(ctx, r.keys.intent(id))
				}
			}
			p.Set(ctx, r.keys.intent(in.ID), v, ttlUntil(in.expires(), now))
			return nil
		})
		return err
	})
	return r.fail(ctx, "put intent", err)
}

// DeleteIntents implements IntentStore.
func (r *Redis) DeleteIntents(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := r.enter(ctx); err != nil {
		return err
	}
	if err := r.writable(); err != nil {
		return err
	}
	err := r.retry(ctx, "delete intent", func(bool) error {
		_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, id := range ids {
				p.Del(ctx, r.keys.intent(id))
			}
			return nil
		})
		return err
	})
	return r.fail(ctx, "delete intent", err)
}

// AllIntents implements IntentStore.
func (r *Redis) AllIntents(ctx context.Context) ([]Intent, error) {
	var out []Intent
	var bad []error
	now := r.now()
	err := r.scanValues(ctx, r.keys.intentPattern(), func(key, val string) {
		in, err := decodeIntent([]byte(val))
		if err != nil {
			bad = append(bad, err)
			return
		}
		if !in.expired(now) {
			out = append(out, in)
		}
	})
	if err != nil {
		return nil, r.fail(ctx, "list intents", err)
	}
	slices.SortFunc(out, olderFirst)
	return out, errors.Join(bad...)
}
