package sessionmap

import (
	"context"
	"errors"
	"slices"
	"time"
)

// The stream index: per session, the resumable streams whose answer the
// bridge still owes the client after the stream broke. A client that lost a
// stream normally resumes it with GET and Last-Event-ID; a client that lost
// the resumed stream too before its first event id (the TypeScript SDK keeps
// only the ids of the stream it reads) reconnects with a GET that names no
// stream. The transport lets a server send a response on a GET stream only
// when it resumes a stream of an earlier request (Streamable HTTP
// 2025-11-25, "Listening for Messages from the Server"), so the bridge
// serves such a GET as the resumption of an owed stream of that session:
// this index says which, to whichever replica gets the GET.
//
// Each entry carries a claim (holder token and lease expiry) so that the
// stream is served by one replica at a time: the replica serving a resumed
// stream holds it and renews it while the wait runs; when that replica dies
// (kill -9) the lease runs out, when its client goes away it releases it,
// and a GET without Last-Event-ID may claim only a free entry. An entry is
// settled once the answer went out on some stream, for good: a settled
// entry stays (invisible) until it expires, so that a replica that notices
// late that a client left the stream cannot index it as owed again. The
// index is bounded (MaxOwedStreams per session; settled, then oldest
// entries dropped) and each entry expires ttl after its last write, with
// the stream it names.

// MaxOwedStreams bounds the owed streams kept per session; the oldest is
// dropped when a new one comes.
const MaxOwedStreams = 32

// OwedStream is one entry of a session's stream index.
type OwedStream struct {
	// StreamID names the stream (StreamRecord.ID) whose answer is owed.
	StreamID string
	// Since is when the stream was indexed; OwedStreams lists oldest first.
	Since time.Time
	// Holder is the claim's token ("" when released); it is valid until
	// LeaseUntil.
	Holder     string
	LeaseUntil time.Time
}

// Free reports whether a new holder may claim the entry at now.
func (o OwedStream) Free(now time.Time) bool {
	return o.Holder == "" || !now.Before(o.LeaseUntil)
}

// StreamIndex keeps the stream index. The EventStores of this package
// implement it beside their streams (Redis for replicas sharing it; the
// in-process MemoryEvents, which a Badger bridge uses, for one process: its
// streams die with the process, so an index outliving them would name
// nothing).
type StreamIndex interface {
	// OweStream indexes streamID as owed to sc and claims it for holder
	// for lease, whoever held it (the client itself named the stream).
	// With holder "" it only indexes a stream not indexed yet, free (its
	// client left it). A settled stream stays settled. The entry expires
	// ttl after its last write.
	OweStream(ctx context.Context, sc Scope, streamID, holder string, lease, ttl time.Duration) error
	// ClaimOwed claims (or, for its holder, renews) an owed stream of sc
	// for lease when it is free (Free) or held by holder already. false
	// with a nil error: another holder has it, or it is not owed (any
	// more).
	ClaimOwed(ctx context.Context, sc Scope, streamID, holder string, lease time.Duration) (bool, error)
	// ReleaseOwed frees holder's claim; the stream stays owed.
	ReleaseOwed(ctx context.Context, sc Scope, streamID, holder string) error
	// SettleOwed settles a stream for good when holder holds it: its
	// answer went out there; it is no longer listed or claimable. A former holder's settle does nothing (its
	// write may have gone to a client that had already left, while the
	// stream is served elsewhere).
	SettleOwed(ctx context.Context, sc Scope, streamID, holder string) error
	// OwedStreams lists sc's owed streams, oldest first.
	OwedStreams(ctx context.Context, sc Scope) ([]OwedStream, error)
}

// owedEntry is an index entry in memory.
type owedEntry struct {
	OwedStream
	principal string
	expires   time.Time
	settled   bool
}

var (
	_ StreamIndex = (*MemoryEvents)(nil)
	_ StreamIndex = (*Memory)(nil)
)

var errOwedArgs = errors.New("sessionmap: an owed stream needs a session and a stream id")

// owedLocked returns sc's live entries, dropping expired ones.
func (m *MemoryEvents) owedLocked(sc Scope, now time.Time) map[string]*owedEntry {
	es := m.owed[sc.Session]
	for id, e := range es {
		if !now.Before(e.expires) {
			delete(es, id)
		}
	}
	if len(es) == 0 {
		delete(m.owed, sc.Session)
		return nil
	}
	return es
}

func (m *MemoryEvents) OweStream(_ context.Context, sc Scope, streamID, holder string, lease, ttl time.Duration) error {
	if sc.Session == "" || streamID == "" {
		return errOwedArgs
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock()
	m.liveLocked("") // sweeps expired streams (and with them nothing else)
	es := m.owedLocked(sc, now)
	if e := es[streamID]; e != nil && e.principal != sc.Principal {
		return ErrNotFound
	}
	if es == nil {
		if m.owed == nil {
			m.owed = map[string]map[string]*owedEntry{}
		}
		es = map[string]*owedEntry{}
		m.owed[sc.Session] = es
	}
	e := es[streamID]
	if e != nil && (e.settled || holder == "") {
		return nil
	}
	if e == nil {
		e = &owedEntry{OwedStream: OwedStream{StreamID: streamID, Since: now}, principal: sc.Principal}
		es[streamID] = e
	}
	e.Holder, e.LeaseUntil, e.expires = holder, now.Add(lease), now.Add(ttl)
	if holder == "" {
		e.LeaseUntil = time.Time{}
	}
	for len(es) > MaxOwedStreams {
		drop := ""
		for id, o := range es {
			if d := es[drop]; drop == "" || (o.settled && !d.settled) || (o.settled == d.settled && owedBefore(o.OwedStream, d.OwedStream)) {
				drop = id
			}
		}
		delete(es, drop)
	}
	return nil
}

// owedBefore orders entries oldest first (the stream id breaks ties).
func owedBefore(a, b OwedStream) bool {
	if !a.Since.Equal(b.Since) {
		return a.Since.Before(b.Since)
	}
	return a.StreamID < b.StreamID
}

func (m *MemoryEvents) ClaimOwed(_ context.Context, sc Scope, streamID, holder string, lease time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock()
	e := m.owedLocked(sc, now)[streamID]
	if e == nil || e.principal != sc.Principal || e.settled {
		return false, nil
	}
	if e.Holder != holder && !e.Free(now) {
		return false, nil
	}
	e.Holder, e.LeaseUntil = holder, now.Add(lease)
	return true, nil
}

func (m *MemoryEvents) ReleaseOwed(_ context.Context, sc Scope, streamID, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.owedLocked(sc, m.clock())[streamID]
	if e != nil && e.principal == sc.Principal && e.Holder == holder && !e.settled {
		e.Holder, e.LeaseUntil = "", time.Time{}
	}
	return nil
}

func (m *MemoryEvents) SettleOwed(_ context.Context, sc Scope, streamID, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.owedLocked(sc, m.clock())[streamID]
	if e != nil && e.principal == sc.Principal && holder != "" && e.Holder == holder && !e.settled {
		e.settled, e.Holder, e.LeaseUntil = true, "", time.Time{}
	}
	return nil
}

func (m *MemoryEvents) OwedStreams(_ context.Context, sc Scope) ([]OwedStream, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []OwedStream
	for _, e := range m.owedLocked(sc, m.clock()) {
		if e.principal == sc.Principal && !e.settled {
			out = append(out, e.OwedStream)
		}
	}
	slices.SortFunc(out, func(a, b OwedStream) int {
		if owedBefore(a, b) {
			return -1
		}
		return 1
	})
	return out, nil
}

func (m *Memory) OweStream(ctx context.Context, sc Scope, streamID, holder string, lease, ttl time.Duration) error {
	return m.events.OweStream(ctx, sc, streamID, holder, lease, ttl)
}

func (m *Memory) ClaimOwed(ctx context.Context, sc Scope, streamID, holder string, lease time.Duration) (bool, error) {
	return m.events.ClaimOwed(ctx, sc, streamID, holder, lease)
}

func (m *Memory) ReleaseOwed(ctx context.Context, sc Scope, streamID, holder string) error {
	return m.events.ReleaseOwed(ctx, sc, streamID, holder)
}

func (m *Memory) SettleOwed(ctx context.Context, sc Scope, streamID, holder string) error {
	return m.events.SettleOwed(ctx, sc, streamID, holder)
}

func (m *Memory) OwedStreams(ctx context.Context, sc Scope) ([]OwedStream, error) {
	return m.events.OwedStreams(ctx, sc)
}
