package sessionmap

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Resumable SSE streams (Streamable HTTP, 2025-11-25): the bridge gives
// every event of a stream it opens an id, keeps the events for a bounded
// time, and a client that reconnects with GET and Last-Event-ID, to any
// replica sharing the store, gets the events of that same stream after that
// id (never another stream's) and then the answer.
//
// An event id is "<stream id>.<n>": the stream id is a random 128-bit id the
// bridge mints (unguessable), n counts the stream's stored events from 1; n
// = 0 names the priming event, which carries no data. A stream is bound to
// the scope (principal and session) that opened it: an id of another
// session's stream answers exactly like an unknown one.

// StreamRecord says what an open stream serves, so that any replica can
// finish it after a reconnect.
type StreamRecord struct {
	// ID is the stream id (random, 128 bits or more).
	ID string `json:"id"`
	// Scope is the principal and session that opened the stream.
	Scope Scope `json:"scope"`
	// Method and Params are the request the stream answers.
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
	// RequestID is the JSON-RPC id of that request (the answer's id).
	RequestID json.RawMessage `json:"requestId"`
	// TaskID is the bridge task the stream waits on, once there is one (a
	// tools/call whose upstream made a task, or a tasks/result).
	TaskID string `json:"taskId,omitempty"`
}

// StreamEvent is one stored event of a stream.
type StreamEvent struct {
	ID   string // "<stream id>.<n>"
	Data []byte // the JSON-RPC message
}

// EventStore keeps the events of resumable streams for a bounded time.
type EventStore interface {
	// OpenStream records a new stream; it and its events expire ttl after
	// the last write.
	OpenStream(ctx context.Context, rec StreamRecord, ttl time.Duration) error
	// SetStreamTask records the task a stream waits on.
	SetStreamTask(ctx context.Context, streamID, taskID string, ttl time.Duration) error
	// AppendEvent stores one event and returns its id; the id reaches the
	// client only after this returned.
	AppendEvent(ctx context.Context, streamID string, data []byte, ttl time.Duration) (string, error)
	// EventsAfter returns the record of the stream that lastEventID belongs
	// to and its events after that id, in order. ErrNotFound when the id is
	// malformed, unknown, expired, or of another scope (indistinguishable).
	EventsAfter(ctx context.Context, sc Scope, lastEventID string) (StreamRecord, []StreamEvent, error)
}

// EventID names event n of a stream.
func EventID(streamID string, n int64) string {
	return streamID + "." + strconv.FormatInt(n, 10)
}

// ParseEventID splits an event id; ok is false when it is malformed.
func ParseEventID(id string) (streamID string, n int64, ok bool) {
	i := strings.LastIndexByte(id, '.')
	if i <= 0 || i > 64 {
		return "", 0, false
	}
	n, err := strconv.ParseInt(id[i+1:], 10, 64)
	if err != nil || n < 0 {
		return "", 0, false
	}
	return id[:i], n, true
}

// sameScope reports whether a stream opened by owner may be resumed by sc:
// the very same principal and session (a stream is a session's, L-70-style
// binding: another session's id answers as unknown).
func sameScope(owner, sc Scope) bool {
	return owner.Principal == sc.Principal && owner.Session == sc.Session
}

// MemoryEvents is an EventStore in process memory, for a single bridge
// process (Badger) or tests; entries expire ttl after their last write.
type MemoryEvents struct {
	clock func() time.Time

	mu      sync.Mutex
	streams map[string]*memStream
	sweep   time.Time
}

type memStream struct {
	rec     StreamRecord
	events  [][]byte
	expires time.Time
}

var _ EventStore = (*MemoryEvents)(nil)

// NewMemoryEvents returns an empty in-process event store.
func NewMemoryEvents() *MemoryEvents {
	return &MemoryEvents{clock: time.Now, streams: map[string]*memStream{}}
}

// liveLocked returns the stream unless it expired; it drops expired
// streams at most once a second, so memory stays bounded by the TTL.
func (m *MemoryEvents) liveLocked(id string) *memStream {
	now := m.clock()
	if now.Sub(m.sweep) > time.Second {
		m.sweep = now
		for k, s := range m.streams {
			if !now.Before(s.expires) {
				delete(m.streams, k)
			}
		}
	}
	s := m.streams[id]
	if s == nil || !now.Before(s.expires) {
		return nil
	}
	return s
}

func (m *MemoryEvents) OpenStream(_ context.Context, rec StreamRecord, ttl time.Duration) error {
	if rec.ID == "" {
		return errors.New("sessionmap: a stream needs an id")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.liveLocked("")
	m.streams[rec.ID] = &memStream{rec: rec, expires: m.clock().Add(ttl)}
	return nil
}

func (m *MemoryEvents) SetStreamTask(_ context.Context, streamID, taskID string, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.liveLocked(streamID)
	if s == nil {
		return ErrNotFound
	}
	s.rec.TaskID = taskID
	s.expires = m.clock().Add(ttl)
	return nil
}

func (m *MemoryEvents) AppendEvent(_ context.Context, streamID string, data []byte, ttl time.Duration) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.liveLocked(streamID)
	if s == nil {
		return "", ErrNotFound
	}
	s.events = append(s.events, append([]byte(nil), data...))
	s.expires = m.clock().Add(ttl)
	return EventID(streamID, int64(len(s.events))), nil
}

func (m *MemoryEvents) EventsAfter(_ context.Context, sc Scope, lastEventID string) (StreamRecord, []StreamEvent, error) {
	id, n, ok := ParseEventID(lastEventID)
	if !ok {
		return StreamRecord{}, nil, ErrNotFound
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.liveLocked(id)
	if s == nil || !sameScope(s.rec.Scope, sc) || n > int64(len(s.events)) {
		return StreamRecord{}, nil, ErrNotFound
	}
	var out []StreamEvent
	for i := n; i < int64(len(s.events)); i++ {
		out = append(out, StreamEvent{ID: EventID(id, i+1), Data: append([]byte(nil), s.events[i]...)})
	}
	return s.rec, out, nil
}

// The memory store keeps its streams beside its records, so bridges sharing
// one Memory (tests, embedding) resume each other's streams.
var _ EventStore = (*Memory)(nil)

func (m *Memory) OpenStream(ctx context.Context, rec StreamRecord, ttl time.Duration) error {
	return m.events.OpenStream(ctx, rec, ttl)
}

func (m *Memory) SetStreamTask(ctx context.Context, streamID, taskID string, ttl time.Duration) error {
	return m.events.SetStreamTask(ctx, streamID, taskID, ttl)
}

func (m *Memory) AppendEvent(ctx context.Context, streamID string, data []byte, ttl time.Duration) (string, error) {
	return m.events.AppendEvent(ctx, streamID, data, ttl)
}

func (m *Memory) EventsAfter(ctx context.Context, sc Scope, lastEventID string) (StreamRecord, []StreamEvent, error) {
	return m.events.EventsAfter(ctx, sc, lastEventID)
}
