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
//	P:es:<stream id>   the StreamRecord (JSON)
//	P:ev:<stream id>   list of the stream's events, oldest first
//
// Both keys carry a Redis TTL renewed on every write, so a stream nobody
// writes to any more vanishes by itself.

var _ EventStore = (*Redis)(nil)

func (k redisKeys) stream(id string) string       { return k.base + "es:" + id }
func (k redisKeys) streamEvents(id string) string { return k.base + "ev:" + id }

// appendEventScript pushes one event when the stream exists and renews both
// TTLs; it returns the new length (the event's number), or -1.
var appendEventScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local n = redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return n
`)

// setStreamTaskScript replaces the record when the stream exists.
var setStreamTaskScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
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
	return r.fail("open stream", r.rdb.Set(ctx, r.keys.stream(rec.ID), b, ttl).Err())
}

func (r *Redis) SetStreamTask(ctx context.Context, streamID, taskID string, ttl time.Duration) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	raw, err := getRecord(ctx, r.rdb, streamID, r.keys.stream(streamID))
	if err != nil {
		return r.fail("stream task", err)
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
	n, err := setStreamTaskScript.Run(ctx, r.rdb, []string{r.keys.stream(streamID), r.keys.streamEvents(streamID)},
		b, ttl.Milliseconds()).Int64()
	if err != nil {
		return r.fail("stream task", err)
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
	n, err := appendEventScript.Run(ctx, r.rdb, []string{r.keys.stream(streamID), r.keys.streamEvents(streamID)},
		data, ttl.Milliseconds()).Int64()
	if err != nil {
		return "", r.fail("append event", err)
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
	var (
		get *redis.StringCmd
		rng *redis.StringSliceCmd
		ln  *redis.IntCmd
	)
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, r.keys.stream(id))
		ln = p.LLen(ctx, r.keys.streamEvents(id))
		rng = p.LRange(ctx, r.keys.streamEvents(id), n, -1)
		return nil
	})
	if errors.Is(get.Err(), redis.Nil) {
		return StreamRecord{}, nil, ErrNotFound
	}
	if err != nil {
		return StreamRecord{}, nil, r.fail("read events", err)
	}
	var rec StreamRecord
	if json.Unmarshal([]byte(get.Val()), &rec) != nil || !sameScope(rec.Scope, sc) || n > ln.Val() {
		return StreamRecord{}, nil, ErrNotFound
	}
	out := make([]StreamEvent, 0, len(rng.Val()))
	for i, d := range rng.Val() {
		out = append(out, StreamEvent{ID: EventID(id, n+int64(i)+1), Data: []byte(d)})
	}
	return rec, out, nil
}
