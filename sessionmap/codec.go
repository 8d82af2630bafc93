package sessionmap

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tasksbridge/tasksbridge/era"
)

// Stored records are an envelope: one schema-version byte, then JSON of that
// version's record struct. The record structs are private and separate from
// the public Session/Task types, so an API change cannot silently change the
// disk format. Rules for later versions:
//   - add a new recordVersion and a sessionVn/taskVn struct, keep decoding
//     every older version (a newer bridge reads an older store);
//   - a record newer than this binary knows is ErrUnsupportedVersion, never
//     decoded lossily (an older bridge would drop fields when rewriting it).
const recordVersion byte = 1

type sessionV1 struct {
	ID               string          `json:"id"`
	Principal        string          `json:"principal,omitempty"`
	Era              string          `json:"era"`
	ProtocolVersion  string          `json:"protocolVersion,omitempty"`
	InitializeParams json.RawMessage `json:"initializeParams,omitempty"`
	LogLevel         string          `json:"logLevel,omitempty"`
	CreatedAt        time.Time       `json:"createdAt"`
	LastSeenAt       time.Time       `json:"lastSeenAt"`
	IdleTimeoutMs    int64           `json:"idleTimeoutMs,omitempty"`
	ExpiresAt        time.Time       `json:"expiresAt,omitzero"`
}

type taskV1 struct {
	ID                string          `json:"id"`
	Principal         string          `json:"principal,omitempty"`
	Session           string          `json:"session,omitempty"`
	Direction         string          `json:"direction"`
	Origin            string          `json:"origin"`
	Upstream          string          `json:"upstream,omitempty"`
	UpstreamTaskID    string          `json:"upstreamTaskId,omitempty"`
	UpstreamSessionID string          `json:"upstreamSessionId,omitempty"`
	Method            string          `json:"method,omitempty"`
	ToolName          string          `json:"toolName,omitempty"`
	RequestedTTLMs    *int64          `json:"requestedTtlMs,omitempty"`
	TTLMs             *int64          `json:"ttlMs,omitempty"`
	Status            string          `json:"status"`
	StatusMessage     string          `json:"statusMessage,omitempty"`
	CreatedAt         time.Time       `json:"createdAt"`
	LastUpdatedAt     time.Time       `json:"lastUpdatedAt"`
	PollIntervalMs    *int64          `json:"pollIntervalMs,omitempty"`
	Result            json.RawMessage `json:"result,omitempty"`
	Error             json.RawMessage `json:"error,omitempty"`
	AnsweredKeys      []string        `json:"answeredKeys,omitempty"`
	CancelPinned      bool            `json:"cancelPinned,omitempty"`
	// Added without a new version: an older bridge ignores it (and so forgets
	// an owed upstream cancel when it rewrites the record, nothing worse).
	UpstreamCancelPending bool `json:"upstreamCancelPending,omitempty"`
	// Added the same way: an older bridge forgets the owed answers when it
	// rewrites the record (their keys stay answered).
	OwedAnswers map[string]json.RawMessage `json:"owedAnswers,omitempty"`
	WrittenAt   time.Time                  `json:"writtenAt"`
}

func encodeSession(s Session) ([]byte, error) {
	return encodeRecord(sessionV1{
		ID: s.ID, Principal: s.Principal, Era: string(s.Era), ProtocolVersion: s.ProtocolVersion,
		InitializeParams: s.InitializeParams, LogLevel: s.LogLevel, CreatedAt: s.CreatedAt,
		LastSeenAt: s.LastSeenAt, IdleTimeoutMs: s.IdleTimeoutMs, ExpiresAt: s.ExpiresAt,
	})
}

func encodeTask(t Task) ([]byte, error) {
	return encodeRecord(taskV1{
		ID: t.ID, Principal: t.Scope.Principal, Session: t.Scope.Session, Direction: string(t.Direction),
		Origin: string(t.Origin), Upstream: t.Upstream, UpstreamTaskID: t.UpstreamTaskID,
		UpstreamSessionID: t.UpstreamSessionID, Method: t.Method, ToolName: t.ToolName,
		RequestedTTLMs: t.RequestedTTLMs, TTLMs: t.TTLMs, Status: string(t.Status),
		StatusMessage: t.StatusMessage, CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt,
		PollIntervalMs: t.PollIntervalMs, Result: t.Result, Error: t.Error,
		AnsweredKeys: t.AnsweredKeys, CancelPinned: t.CancelPinned, UpstreamCancelPending: t.UpstreamCancelPending,
		OwedAnswers: t.OwedAnswers, WrittenAt: t.WrittenAt,
	})
}

func encodeRecord(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("sessionmap: encode record: %w", err)
	}
	return append([]byte{recordVersion}, b...), nil
}

// decodeEnvelope checks the version byte and returns the JSON body.
func decodeEnvelope(what string, b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: %s: empty value", ErrCorrupt, what)
	}
	if b[0] > recordVersion {
		return nil, fmt.Errorf("%w: %s has schema version %d, this bridge reads up to %d",
			ErrUnsupportedVersion, what, b[0], recordVersion)
	}
	if b[0] == 0 {
		return nil, fmt.Errorf("%w: %s: bad schema version 0", ErrCorrupt, what)
	}
	return b[1:], nil
}

func decodeSession(what string, b []byte) (Session, error) {
	body, err := decodeEnvelope(what, b)
	if err != nil {
		return Session{}, err
	}
	var r sessionV1 // only version 1 exists so far
	if err := json.Unmarshal(body, &r); err != nil {
		return Session{}, fmt.Errorf("%w: %s: %v", ErrCorrupt, what, err)
	}
	s := Session{
		ID: r.ID, Principal: r.Principal, Era: era.Era(r.Era), ProtocolVersion: r.ProtocolVersion,
		InitializeParams: r.InitializeParams, LogLevel: r.LogLevel, CreatedAt: r.CreatedAt,
		LastSeenAt: r.LastSeenAt, IdleTimeoutMs: r.IdleTimeoutMs, ExpiresAt: r.ExpiresAt,
	}
	if !validID(s.ID) || !s.Era.Valid() {
		return Session{}, fmt.Errorf("%w: %s: missing id or era", ErrCorrupt, what)
	}
	return s, nil
}

func decodeTask(what string, b []byte) (Task, error) {
	body, err := decodeEnvelope(what, b)
	if err != nil {
		return Task{}, err
	}
	var r taskV1
	if err := json.Unmarshal(body, &r); err != nil {
		return Task{}, fmt.Errorf("%w: %s: %v", ErrCorrupt, what, err)
	}
	// The strings every record repeats are the constants or the last
	// value seen (sharedString), not copies of their own: a decoded task
	// is kept for as long as its parked waits wait (the legacy face's hub
	// for the task holds one).
	t := Task{
		ID: r.ID, Scope: Scope{Principal: r.Principal, Session: r.Session}, Direction: canonical(Direction(r.Direction), directions),
		Origin: canonical(Origin(r.Origin), origins), Upstream: recentUpstream.share(r.Upstream), UpstreamTaskID: r.UpstreamTaskID,
		UpstreamSessionID: r.UpstreamSessionID, Method: recentMethod.share(r.Method), ToolName: recentTool.share(r.ToolName),
		RequestedTTLMs: r.RequestedTTLMs, TTLMs: r.TTLMs, Status: canonical(Status(r.Status), Statuses),
		StatusMessage: r.StatusMessage, CreatedAt: r.CreatedAt, LastUpdatedAt: r.LastUpdatedAt,
		PollIntervalMs: r.PollIntervalMs, Result: r.Result, Error: r.Error,
		AnsweredKeys: r.AnsweredKeys, CancelPinned: r.CancelPinned, UpstreamCancelPending: r.UpstreamCancelPending,
		OwedAnswers: r.OwedAnswers, WrittenAt: r.WrittenAt,
	}
	if !validID(t.ID) || !t.Scope.Valid() || !t.Status.Valid() || !t.Direction.Valid() || !t.Origin.Valid() {
		return Task{}, fmt.Errorf("%w: %s: missing or unknown id, scope, status, direction or origin", ErrCorrupt, what)
	}
	return t, nil
}

// The list index (i/ keys) carries a small binary summary of each task, so a
// tasks/list page is one range scan with no record lookups or JSON decoding
// (the list-page latency target). It holds exactly the fields of listView.
//
//	version(1)=1 | status(1) | flags(1: ttl, poll, pinned) | created(8) |
//	lastUpdated(8) | ttlMs(8) | pollMs(8) | uvarint len | statusMessage
const summaryVersion byte = 1

// Stored status codes: never renumber.
var statusCodes = map[Status]byte{StatusWorking: 1, StatusInputRequired: 2, StatusCompleted: 3, StatusFailed: 4, StatusCancelled: 5}

var statusByCode = [...]Status{1: StatusWorking, 2: StatusInputRequired, 3: StatusCompleted, 4: StatusFailed, 5: StatusCancelled}

const (
	flagTTL byte = 1 << iota
	flagPoll
	flagPinned
	summaryFixed = 3 + 4*8
)

func encodeSummary(t Task) []byte {
	b := make([]byte, 3, summaryFixed+binary.MaxVarintLen64+len(t.StatusMessage))
	b[0], b[1] = summaryVersion, statusCodes[t.Status]
	var ttl, poll int64
	if t.TTLMs != nil {
		b[2] |= flagTTL
		ttl = *t.TTLMs
	}
	if t.PollIntervalMs != nil {
		b[2] |= flagPoll
		poll = *t.PollIntervalMs
	}
	if t.CancelPinned {
		b[2] |= flagPinned
	}
	for _, v := range []int64{t.CreatedAt.UnixNano(), t.LastUpdatedAt.UnixNano(), ttl, poll} {
		b = binary.BigEndian.AppendUint64(b, uint64(v))
	}
	b = binary.AppendUvarint(b, uint64(len(t.StatusMessage)))
	return append(b, t.StatusMessage...)
}

func decodeSummary(id string, sc Scope, b []byte) (Task, error) {
	if len(b) < summaryFixed+1 || b[0] != summaryVersion {
		return Task{}, fmt.Errorf("%w: list entry: bad length or version", ErrCorrupt)
	}
	t := Task{ID: id, Scope: sc}
	if int(b[1]) < len(statusByCode) {
		t.Status = statusByCode[b[1]]
	}
	if t.Status == "" {
		return Task{}, fmt.Errorf("%w: list entry: unknown status %d", ErrCorrupt, b[1])
	}
	u := func(i int) int64 { return int64(binary.BigEndian.Uint64(b[3+8*i:])) }
	t.CreatedAt = time.Unix(0, u(0)).UTC()
	t.LastUpdatedAt = time.Unix(0, u(1)).UTC()
	if b[2]&flagTTL != 0 {
		v := u(2)
		t.TTLMs = &v
	}
	if b[2]&flagPoll != 0 {
		v := u(3)
		t.PollIntervalMs = &v
	}
	t.CancelPinned = b[2]&flagPinned != 0
	n, k := binary.Uvarint(b[summaryFixed:])
	if k <= 0 || uint64(len(b)-summaryFixed-k) != n {
		return Task{}, fmt.Errorf("%w: list entry: bad message length", ErrCorrupt)
	}
	t.StatusMessage = string(b[summaryFixed+k:])
	return t, nil
}

var (
	directions = []Direction{LegacyToModern, ModernToLegacy}
	origins    = []Origin{OriginUpstreamTask, OriginSynthesized}
)

// canonical is v as the constant in known it equals, or v.
func canonical[T ~string](v T, known []T) T {
	for _, k := range known {
		if v == k {
			return k
		}
	}
	return v
}

// sharedString hands out the last value it was given when it is given an
// equal one: a field that repeats from record to record (the upstream, the
// method, mostly the tool) then shares one string among decoded records.
type sharedString struct{ p atomic.Pointer[string] }

var recentUpstream, recentMethod, recentTool sharedString

func (s *sharedString) share(v string) string {
	if v == "" {
		return ""
	}
	if p := s.p.Load(); p != nil && *p == v {
		return *p
	}
	s.p.Store(&v)
	return v
}
