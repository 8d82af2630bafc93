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

// MaxStreamEvents bounds the events kept per stream (a long-lived GET
// stream could otherwise grow for as long as it is written to): older ones
// are dropped, and a resume from before them answers ErrNotFound rather than
// replay a stream with a hole.
const MaxStreamEvents = 1000

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
	// malformed, unknown, expired, of another scope (indistinguishable), or
	// older than the oldest event kept (MaxStreamEvents).
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
	owed    map[string]map[string]*owedEntry // the stream index (owed.go), by session id
}

// memStream is one open stream: a parked tasks/result keeps one for as
// long as it waits, with no event until its answer, so the events live
// apart (log, made by the first) and the expiry is Unix nanoseconds: 144
// bytes instead of 192.
type memStream struct {
	rec     StreamRecord
	log     *memEventLog // nil: no event yet
	expires int64        // Unix nanoseconds
}

type memEventLog struct {
	events [][]byte // the newest events, at most MaxStreamEvents
	total  int64    // events ever appended: the number of the last one
}

// live reports whether s has not expired at now.
func (s *memStream) live(now time.Time) bool { return now.UnixNano() < s.expires }

// kept returns the stream's events and the number of its last one.
func (s *memStream) kept() ([][]byte, int64) {
	if s.log == nil {
		return nil, 0
	}
	return s.log.events, s.log.total
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
			if !s.live(now) {
				delete(m.streams, k)
			}
		}
	}
	s := m.streams[id]
	if s == nil || !s.live(now) {
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
	m.streams[rec.ID] = &memStream{rec: rec, expires: m.clock().Add(ttl).UnixNano()}
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
	s.expires = m.clock().Add(ttl).UnixNano()
	return nil
}

func (m *MemoryEvents) AppendEvent(_ context.Context, streamID string, data []byte, ttl time.Duration) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.liveLocked(streamID)
	if s == nil {
		return "", ErrNotFound
	}
	if s.log == nil {
		s.log = new(memEventLog)
	}
	l := s.log
	l.events = append(l.events, append([]byte(nil), data...))
	if len(l.events) > MaxStreamEvents {
		l.events = append([][]byte(nil), l.events[len(l.events)-MaxStreamEvents:]...)
	}
	l.total++
	s.expires = m.clock().Add(ttl).UnixNano()
	return EventID(streamID, l.total), nil
}

func (m *MemoryEvents) EventsAfter(_ context.Context, sc Scope, lastEventID string) (StreamRecord, []StreamEvent, error) {
	id, n, ok := ParseEventID(lastEventID)
	if !ok {
		return StreamRecord{}, nil, ErrNotFound
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.liveLocked(id)
	if s == nil || !sameScope(s.rec.Scope, sc) {
		return StreamRecord{}, nil, ErrNotFound
	}
	kept, total := s.kept()
	out, ok := eventsAfter(id, n, total, kept)
	if !ok {
		return StreamRecord{}, nil, ErrNotFound
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

// eventsAfter picks the events numbered above n from kept, the newest
// events of a stream whose last event is number total; ok is false when n
// is beyond total or events after n were dropped.
func eventsAfter(id string, n, total int64, kept [][]byte) ([]StreamEvent, bool) {
	first := total - int64(len(kept)) + 1
	if n > total || n+1 < first {
		return nil, false
	}
	out := make([]StreamEvent, 0, total-n)
	for i := n + 1 - first; i < int64(len(kept)); i++ {
		out = append(out, StreamEvent{ID: EventID(id, first+i), Data: append([]byte(nil), kept[i]...)})
	}
	return out, true
}
