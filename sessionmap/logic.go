package sessionmap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
)

// The rules below are shared by every backend in this package, so the Badger
// and memory stores cannot drift apart.

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, a...))
}

func validID(id string) bool { return id != "" && len(id) <= MaxIDLen }

// prepareSession validates s and fills defaults for a create at now.
func prepareSession(s Session, now time.Time) (Session, error) {
	if !validID(s.ID) {
		return s, invalid("session id must be 1..%d bytes", MaxIDLen)
	}
	if len(s.Principal) > MaxIDLen {
		return s, invalid("principal longer than %d bytes", MaxIDLen)
	}
	if !s.Era.Valid() {
		return s, invalid("session era %q", s.Era)
	}
	if len(s.InitializeParams) > 0 && !json.Valid(s.InitializeParams) {
		return s, invalid("session initialize params are not valid JSON")
	}
	if s.IdleTimeoutMs < 0 {
		return s, invalid("negative idle timeout")
	}
	if s.CreatedAt.IsZero() {
		s.CreatedAt = now
	}
	if s.LastSeenAt.IsZero() {
		s.LastSeenAt = s.CreatedAt
	}
	s.CreatedAt, s.LastSeenAt = s.CreatedAt.UTC(), s.LastSeenAt.UTC()
	s.InitializeParams = compactJSON(s.InitializeParams)
	s.ExpiresAt = sessionExpiry(s)
	return s, nil
}

func sessionExpiry(s Session) time.Time {
	if s.IdleTimeoutMs <= 0 {
		return time.Time{}
	}
	return s.LastSeenAt.Add(time.Duration(s.IdleTimeoutMs) * time.Millisecond)
}

func sessionExpired(s Session, now time.Time) bool {
	return !s.ExpiresAt.IsZero() && !now.Before(s.ExpiresAt)
}

// sessionVisible is the scope check for sessions: same id and same principal.
func sessionVisible(s Session, sc Scope, now time.Time) bool {
	return s.ID == sc.Session && s.Principal == sc.Principal && !sessionExpired(s, now)
}

// touchGranularity: a touch less than this after the last recorded one
// changes nothing, so a busy session does not cost one write per request. The
// idle expiry is then at most this much early.
const touchGranularity = time.Second

// touchSession returns the touched session and whether it must be written.
func touchSession(s Session, logLevel *string, now time.Time) (Session, bool) {
	changed := false
	if now.Sub(s.LastSeenAt) >= touchGranularity {
		s.LastSeenAt = now.UTC()
		changed = true
	}
	if logLevel != nil && *logLevel != s.LogLevel {
		s.LogLevel = *logLevel
		changed = true
	}
	s.ExpiresAt = sessionExpiry(s)
	return s, changed
}

func cloneSession(s Session) Session {
	s.InitializeParams = slices.Clone(s.InitializeParams)
	return s
}

func cloneTask(t Task) Task {
	t.RequestedTTLMs = clonePtr(t.RequestedTTLMs)
	t.TTLMs = clonePtr(t.TTLMs)
	t.PollIntervalMs = clonePtr(t.PollIntervalMs)
	t.Result = slices.Clone(t.Result)
	t.Error = slices.Clone(t.Error)
	t.AnsweredKeys = slices.Clone(t.AnsweredKeys)
	t.OwedAnswers = cloneAnswers(t.OwedAnswers)
	return t
}

func cloneAnswers(m map[string]json.RawMessage) map[string]json.RawMessage {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = slices.Clone(v)
	}
	return out
}

func clonePtr(p *int64) *int64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// prepareTask validates t and fills defaults for a create at now.
func prepareTask(t Task, now time.Time) (Task, error) {
	t = cloneTask(t) // the store must not alias the caller's pointers
	if !validID(t.ID) {
		return t, invalid("task id must be 1..%d bytes", MaxIDLen)
	}
	if !t.Scope.Valid() {
		return t, invalid("task scope needs a principal or a session")
	}
	if !t.Direction.Valid() {
		return t, invalid("task direction %q", t.Direction)
	}
	if !t.Origin.Valid() {
		return t, invalid("task origin %q", t.Origin)
	}
	if t.Status == "" {
		t.Status = StatusWorking
	}
	if !t.Status.Valid() {
		return t, invalid("task status %q", t.Status)
	}
	if t.CancelPinned && t.Status != StatusCancelled {
		return t, invalid("a pinned cancel needs status cancelled")
	}
	if t.TTLMs != nil && *t.TTLMs < 0 || t.RequestedTTLMs != nil && *t.RequestedTTLMs < 0 {
		return t, invalid("negative ttl")
	}
	if err := checkPayload(t.Status, t.Result, t.Error); err != nil {
		return t, err
	}
	if t.CreatedAt.IsZero() {
		t.CreatedAt = now
	}
	if t.LastUpdatedAt.IsZero() {
		t.LastUpdatedAt = t.CreatedAt
	}
	t.CreatedAt, t.LastUpdatedAt = t.CreatedAt.UTC(), t.LastUpdatedAt.UTC()
	t.Result, t.Error = compactJSON(t.Result), compactJSON(t.Error)
	if !t.Status.Terminal() {
		t.Result, t.Error = nil, nil
	}
	t.AnsweredKeys = normalizeKeys(t.AnsweredKeys)
	if len(t.OwedAnswers) > 0 {
		if t.Status.Terminal() {
			t.OwedAnswers = nil
		} else if err := checkAnswers(t.OwedAnswers); err != nil {
			return t, err
		}
		for k := range t.OwedAnswers {
			if _, found := slices.BinarySearch(t.AnsweredKeys, k); !found {
				return t, invalid("owed answer %q is not an answered key", k)
			}
		}
	}
	t.WrittenAt = now.UTC()
	return t, nil
}

// checkAnswers requires every owed payload to be a JSON object (an
// inputResponses value).
func checkAnswers(m map[string]json.RawMessage) error {
	for k, v := range m {
		if v = bytes.TrimSpace(v); len(v) == 0 || v[0] != '{' || !json.Valid(v) {
			return invalid("answer %q is not a JSON object", k)
		}
	}
	return nil
}

func checkPayload(st Status, result, rpcErr json.RawMessage) error {
	if len(result) > 0 && len(rpcErr) > 0 {
		return invalid("a task has a result or an error, not both")
	}
	if len(result) > 0 && !json.Valid(result) {
		return invalid("task result is not valid JSON")
	}
	if len(rpcErr) > 0 && !json.Valid(rpcErr) {
		return invalid("task error is not valid JSON")
	}
	return nil
}

// compactJSON returns a compact copy of valid JSON (so stored bytes do not
// alias the caller's), or nil for empty input.
func compactJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return append(json.RawMessage(nil), b...)
	}
	return buf.Bytes()
}

func normalizeKeys(keys []string) []string {
	if len(keys) == 0 {
		return nil
	}
	out := slices.Clone(keys)
	slices.Sort(out)
	return slices.Compact(out)
}

// applySnapshot is the monotonic status rule (L-26, L-59; docs/ARCHITECTURE.md,
// Status is monotonic and a pinned cancel sticks): it returns
// the effective record and whether anything changed.
func applySnapshot(cur Task, s Snapshot, now time.Time) (Task, bool, error) {
	if !s.Status.Valid() {
		return cur, false, invalid("snapshot status %q", s.Status)
	}
	if s.PollIntervalMs != nil && *s.PollIntervalMs < 0 {
		return cur, false, invalid("negative poll interval")
	}
	if err := checkPayload(s.Status, s.Result, s.Error); err != nil {
		return cur, false, err
	}
	if cur.Status.Terminal() {
		// Terminal is absorbing, and a pinned cancel is terminal: a late
		// completion is dropped silently (L-26: terminal never changes).
		return cur, false, nil
	}
	at := s.LastUpdatedAt
	if at.IsZero() {
		at = now
	}
	at = at.UTC()
	if !s.Status.Terminal() && at.Before(cur.LastUpdatedAt) {
		return cur, false, nil // stale observation
	}
	next := cur
	next.Status, next.StatusMessage = s.Status, s.StatusMessage
	if s.PollIntervalMs != nil {
		p := *s.PollIntervalMs
		next.PollIntervalMs = &p
	}
	if s.Status.Terminal() {
		next.Result, next.Error = compactJSON(s.Result), compactJSON(s.Error)
		next.UpstreamCancelPending = s.CancelUpstream && cur.UpstreamTaskID != ""
		next.OwedAnswers = nil // an ended task takes no answers
	}
	if !s.Status.Terminal() && next.Status == cur.Status && next.StatusMessage == cur.StatusMessage &&
		ptrEq(next.PollIntervalMs, cur.PollIntervalMs) {
		return cur, false, nil // nothing new; spare the write
	}
	if at.After(next.LastUpdatedAt) {
		next.LastUpdatedAt = at
	}
	next.WrittenAt = now.UTC()
	return next, true, nil
}

func ptrEq(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// pinCancel is the legacy tasks/cancel rule (L-55, L-58).
func pinCancel(cur Task, now time.Time) (Task, error) {
	if cur.Status.Terminal() {
		return cur, ErrTerminal
	}
	next := cur
	next.Status, next.CancelPinned = StatusCancelled, true
	// The upstream must hear of it (L-57); the debt is part of the same write.
	next.UpstreamCancelPending = cur.UpstreamTaskID != ""
	next.StatusMessage = "cancelled by the client"
	next.Result, next.Error = nil, nil
	next.OwedAnswers = nil // a cancelled task takes no answers
	if now.After(next.LastUpdatedAt) {
		next.LastUpdatedAt = now.UTC()
	}
	next.WrittenAt = now.UTC()
	return next, nil
}

// settleUpstream clears the upstream-cancel debt.
func settleUpstream(cur Task, now time.Time) (Task, bool) {
	if !cur.UpstreamCancelPending {
		return cur, false
	}
	next := cur
	next.UpstreamCancelPending = false
	next.WrittenAt = now.UTC()
	return next, true
}

// recordAnswered returns the updated task and the keys that were new, in the
// caller's order (docs/ARCHITECTURE.md, Each input key is asked once and
// answered once).
func recordAnswered(cur Task, keys []string, now time.Time) (Task, []string) {
	if cur.Status.Terminal() {
		return cur, nil
	}
	var fresh []string
	for _, k := range keys {
		if _, found := slices.BinarySearch(cur.AnsweredKeys, k); found || slices.Contains(fresh, k) {
			continue
		}
		fresh = append(fresh, k)
	}
	if len(fresh) == 0 {
		return cur, nil
	}
	next := cur
	next.AnsweredKeys = normalizeKeys(append(slices.Clone(cur.AnsweredKeys), fresh...))
	next.WrittenAt = now.UTC()
	return next, fresh
}

// oweAnswers is recordAnswered keeping the payloads of the fresh keys as
// owed; fresh is sorted.
func oweAnswers(cur Task, answers map[string]json.RawMessage, now time.Time) (Task, []string, error) {
	if err := checkAnswers(answers); err != nil {
		return cur, nil, err
	}
	keys := slices.Sorted(maps.Keys(answers))
	next, fresh := recordAnswered(cur, keys, now)
	if len(fresh) == 0 {
		return cur, nil, nil
	}
	next.OwedAnswers = cloneAnswers(cur.OwedAnswers)
	if next.OwedAnswers == nil {
		next.OwedAnswers = make(map[string]json.RawMessage, len(fresh))
	}
	for _, k := range fresh {
		next.OwedAnswers[k] = compactJSON(answers[k])
	}
	return next, fresh, nil
}

// settleAnswers drops the owed payloads of keys.
func settleAnswers(cur Task, keys []string, now time.Time) (Task, bool) {
	next := cur
	next.OwedAnswers = cloneAnswers(cur.OwedAnswers)
	for _, k := range keys {
		delete(next.OwedAnswers, k)
	}
	if len(next.OwedAnswers) == len(cur.OwedAnswers) {
		return cur, false
	}
	if len(next.OwedAnswers) == 0 {
		next.OwedAnswers = nil
	}
	next.WrittenAt = now.UTC()
	return next, true
}

func clampPageSize(n int) int {
	if n <= 0 {
		return DefaultPageSize
	}
	return min(n, MaxPageSize)
}

// newerFirst orders tasks for listing: CreatedAt descending, then id
// ascending (the byte order of the Badger list index).
func newerFirst(a, b Task) int {
	return comparePos(posOf(a), posOf(b))
}

// listView is what ListTasks returns for a task: the fields a tasks/list
// entry needs (L-52) plus its owner. Payloads, the upstream mapping and the
// answered keys come from GetTask.
func listView(t Task) Task {
	return Task{ID: t.ID, Scope: t.Scope, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt, TTLMs: clonePtr(t.TTLMs),
		PollIntervalMs: clonePtr(t.PollIntervalMs), CancelPinned: t.CancelPinned}
}
