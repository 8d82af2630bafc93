package sessionmap

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Resumable streams in Redis, under the store's prefix P:
//
//	P:es:{<stream id>}   the StreamRecord (JSON)
//	P:ev:{<stream id>}   list of the stream's newest events (MaxStreamEvents), oldest first
//	P:en:{<stream id>}   the number of the stream's last event
//
// The three share the stream's hash tag: the append and set-task scripts
// and EventsAfter's MULTI touch all three together (one Cluster slot).
//
// Both keys carry a Redis TTL renewed on every write, so a stream nobody
// writes to any more vanishes by itself.

var _ EventStore = (*Redis)(nil)

func (k redisKeys) stream(id string) string       { return k.base + "es:{" + id + "}" }
func (k redisKeys) streamEvents(id string) string { return k.base + "ev:{" + id + "}" }
func (k redisKeys) streamCount(id string) string  { return k.base + "en:{" + id + "}" }

func (k redisKeys) streamKeys(id string) []string {
	return []string{k.stream(id), k.streamEvents(id), k.streamCount(id)}
}

// appendEventScript pushes one event when the stream exists, keeps the
// newest ARGV[3] and renews the TTLs; it returns the event's number, or -1.
var appendEventScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local n = redis.call('INCR', KEYS[3])
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[3]), -1)
for i = 1, 3 do redis.call('PEXPIRE', KEYS[i], ARGV[2]) end
return n
`)

// setStreamTaskScript replaces the record when the stream exists.
var setStreamTaskScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
return 1
`)

func (r *Redis) OpenStream(ctx context.Context, rec StreamRecord, ttl time.Duration) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	if !validID(rec.ID) {
		return ErrInvalidArgument
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return r.fail(ctx, "open stream", r.retry(ctx, "open stream", func(bool) error {
		return r.rdb.Set(ctx, r.keys.stream(rec.ID), b, ttl).Err()
	}))
}

func (r *Redis) SetStreamTask(ctx context.Context, streamID, taskID string, ttl time.Duration) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	var raw []byte
	err := r.retry(ctx, "stream task", func(bool) (err error) {
		raw, err = getRecord(ctx, r.rdb, streamID, r.keys.stream(streamID))
		return err
	})
	if err != nil {
		return r.fail(ctx, "stream task", err)
	}
	var rec StreamRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return ErrCorrupt
	}
	rec.TaskID = taskID
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	var n int64
	err = r.retry(ctx, "stream task", func(bool) (err error) {
		n, err = setStreamTaskScript.Run(ctx, r.rdb, r.keys.streamKeys(streamID), b, ttl.Milliseconds()).Int64()
		return err
	})
	if err != nil {
		return r.fail(ctx, "stream task", err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

func (r *Redis) AppendEvent(ctx context.Context, streamID string, data []byte, ttl time.Duration) (string, error) {
	if err := r.enter(ctx); err != nil {
		return "", err
	}
	if !validID(streamID) {
		return "", ErrNotFound
	}
	// Retried only when it surely did not run: appended twice, an event
	// would be replayed twice.
	var n int64
	err := r.retryIf(ctx, "append event", notApplied, func(bool) (err error) {
		n, err = appendEventScript.Run(ctx, r.rdb, r.keys.streamKeys(streamID), data, ttl.Milliseconds(), MaxStreamEvents).Int64()
		return err
	})
	if err != nil {
		return "", r.fail(ctx, "append event", err)
	}
	if n < 0 {
		return "", ErrNotFound
	}
	return EventID(streamID, n), nil
}

func (r *Redis) EventsAfter(ctx context.Context, sc Scope, lastEventID string) (StreamRecord, []StreamEvent, error) {
	if err := r.enter(ctx); err != nil {
		return StreamRecord{}, nil, err
	}
	id, n, ok := ParseEventID(lastEventID)
	if !ok || !validID(id) {
		return StreamRecord{}, nil, ErrNotFound
	}
	// One transaction, so the count and the list agree.
	var (
		get, cnt *redis.StringCmd
		rng      *redis.StringSliceCmd
	)
	err := r.retry(ctx, "read events", func(bool) error {
		_, err := r.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			get = p.Get(ctx, r.keys.stream(id))
			cnt = p.Get(ctx, r.keys.streamCount(id))
			rng = p.LRange(ctx, r.keys.streamEvents(id), 0, -1)
			return nil
		})
		if errors.Is(err, redis.Nil) {
			return nil
		}
		return err
	})
	if errors.Is(get.Err(), redis.Nil) {
		return StreamRecord{}, nil, ErrNotFound
	}
	if err != nil {
		return StreamRecord{}, nil, r.fail(ctx, "read events", err)
	}
	var rec StreamRecord
	if json.Unmarshal([]byte(get.Val()), &rec) != nil || !sameScope(rec.Scope, sc) {
		return StreamRecord{}, nil, ErrNotFound
	}
	total, _ := cnt.Int64() // no count yet: no events
	kept := make([][]byte, len(rng.Val()))
	for i, d := range rng.Val() {
		kept[i] = []byte(d)
	}
	out, ok := eventsAfter(id, n, total, kept)
	if !ok {
		return StreamRecord{}, nil, ErrNotFound
	}
	return rec, out, nil
}
