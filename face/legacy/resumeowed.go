package legacyface

import (
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// Owed answers of broken streams (the stream index, sessionmap
// StreamIndex). A client that loses a wait's stream resumes it with GET and
// Last-Event-ID; but a client that loses the resumed stream too before its
// first event id reconnects with a GET that names no stream (the TypeScript
// SDK keeps only the ids of the stream it reads, and sends none when it has
// none), and without help its request runs into its timeout although the
// task ended. The transport lets a server send a response on a GET stream
// only when it resumes a stream of an earlier request (Streamable HTTP
// 2025-11-25, "Listening for Messages from the Server"); so such a GET is
// served as the resumption of a stream of that session whose answer is
// still owed: its stored events from the start, then the answer under the
// original request id (the SDK also puts the id of the request it
// reconnects for on a result that arrives there).
//
// A stream is owed from the moment its client left it with the answer
// unwritten: its replica indexes it when it sees the client go (released:
// any replica may serve it), and a replica that resumes it indexes it as
// held by itself, renewing the lease while the wait runs, so that a
// replica killed under it (which neither writes nor releases) gives it up
// when the lease runs out. The answer going out on some stream settles the
// entry, so it is delivered once. A GET without Last-Event-ID claims the
// oldest free entry; when every entry is held it waits for one lease to run
// out (bounded: then it is the session's listening stream, as before).
//
// One limit: a GET names no request, so when one session has several
// broken waits at once, a GET resumes the oldest, not necessarily the one
// its client reconnects for; each GET still gets one stream and every owed
// answer goes out once, but a client that gives a result on a reconnected
// stream the id of the request it reconnected for (the TypeScript SDK does)
// can match it to the wrong one of those requests.

// owedLease is how long a replica's claim on an owed stream lasts without
// renewal; it renews every third of it while its wait runs.
const owedLease = 2 * time.Second

// streamIndex is the stream index kept beside the event store (nil: none).
func (b *Bridge) streamIndex() sessionmap.StreamIndex {
	idx, _ := b.events.(sessionmap.StreamIndex)
	return idx
}

// waitsOnTask reports whether a stream of method can owe an answer that a
// wait on a task produces (a tasks/result, or a tools/call whose upstream
// made a task).
func waitsOnTask(rec sessionmap.StreamRecord) bool { return waitsOnTaskOf(rec.Method, rec.TaskID) }

func waitsOnTaskOf(method, taskID string) bool {
	return method == legacy.MethodTasksResult || (method == legacy.MethodToolsCall && taskID != "")
}

// owedClaim is this replica's hold on an owed stream while a resumed
// stream serves it: one goroutine renews the lease and, when the request
// ends, settles the entry (answered) or releases it.
type owedClaim struct {
	b      *Bridge
	idx    sessionmap.StreamIndex
	sc     sessionmap.Scope
	stream string
	holder string

	once sync.Once
	fin  chan bool     // the request's end: true when the answer went out
	done chan struct{} // closed when the goroutine has settled or released

	// gone reports that the client closed a connection the wait took over
	// (parked.go), which the wait itself notices only at its next
	// keep-alive: the claim is released at once instead of renewed.
	gone atomic.Pointer[func() bool]
}

// watchPeer sets the claim's gone check; nil-safe.
func (c *owedClaim) watchPeer(gone func() bool) {
	if c != nil {
		c.gone.Store(&gone)
	}
}

// oweStream indexes a stream the client resumes by its id as owed and held
// by this replica; nil when it cannot owe an answer or the index failed
// (the stream is served all the same).
func (b *Bridge) oweStream(s *session, rec sessionmap.StreamRecord) *owedClaim {
	idx := b.streamIndex()
	if idx == nil || !waitsOnTask(rec) {
		return nil
	}
	holder := randomID()
	ctx, cancel := storeCtx()
	err := idx.OweStream(ctx, s.scope(), rec.ID, holder, owedLease, b.cfg.StreamRetention)
	cancel()
	if err != nil {
		b.log.Warn("face: cannot record a resumed stream as owed; a reconnect without Last-Event-ID will not find it", "err", err)
		return nil
	}
	return b.holdOwed(idx, s.scope(), rec.ID, holder)
}

// holdOwed starts renewing a claim this replica holds.
func (b *Bridge) holdOwed(idx sessionmap.StreamIndex, sc sessionmap.Scope, stream, holder string) *owedClaim {
	c := &owedClaim{b: b, idx: idx, sc: sc, stream: stream, holder: holder, fin: make(chan bool, 1), done: make(chan struct{})}
	go c.run()
	return c
}

// finish ends the claim: the entry is settled when ok (the answer went
// out), else released. It returns once the store has been told, so a
// GET that follows sees the outcome. Later calls do nothing.
func (c *owedClaim) finish(ok bool) {
	if c == nil {
		return
	}
	c.once.Do(func() { c.fin <- ok })
	<-c.done
}

func (c *owedClaim) run() {
	defer close(c.done)
	t := time.NewTicker(owedLease / 3)
	defer t.Stop()
	renew := t.C
	limit := time.NewTimer(c.b.cfg.StreamRetention) // the entry expires with its stream anyway
	defer limit.Stop()
	for {
		select {
		case ok := <-c.fin:
			ctx, cancel := storeCtx()
			var err error
			if ok {
				err = c.idx.SettleOwed(ctx, c.sc, c.stream, c.holder)
			} else {
				err = c.idx.ReleaseOwed(ctx, c.sc, c.stream, c.holder)
			}
			cancel()
			if err != nil {
				c.b.log.Warn("face: cannot update an owed stream's entry", "answered", ok, "err", err)
			}
			return
		case <-renew:
			if g := c.gone.Load(); g != nil && (*g)() {
				ctx, cancel := storeCtx()
				if err := c.idx.ReleaseOwed(ctx, c.sc, c.stream, c.holder); err != nil {
					c.b.log.Warn("face: cannot release an owed stream", "err", err)
				}
				cancel()
				renew = nil
				continue
			}
			ctx, cancel := storeCtx()
			held, err := c.idx.ClaimOwed(ctx, c.sc, c.stream, c.holder, owedLease)
			cancel()
			if err == nil && !held {
				// Taken over or settled elsewhere: stop renewing, but an
				// answer that goes out here still settles it.
				renew = nil
			}
		case <-limit.C:
			c.once.Do(func() {})
			return
		}
	}
}

// oweCut indexes the stream of a wait whose client went away before its
// answer was written, released, so that a GET without Last-Event-ID on any
// replica may resume it. A stream that a resumed claim holds is released
// by its claim instead.
func (r *resumable) oweCut(s *session) {
	if !r.isOpen() || r.claim != nil || !waitsOnTaskOf(r.method, r.taskID) {
		return
	}
	idx := r.b.streamIndex()
	if idx == nil {
		return
	}
	ctx, cancel := storeCtx()
	err := idx.OweStream(ctx, s.scope(), r.id, "", 0, r.b.cfg.StreamRetention)
	cancel()
	if err != nil {
		r.b.log.Warn("face: cannot record a broken stream as owed; a reconnect without Last-Event-ID will not find it", "err", err)
	}
}

// serveOwed serves a GET without Last-Event-ID as the resumption of a
// stream of s whose answer is owed, when there is one. served is false when
// the GET is left to be the session's listening stream; parked is as for
// serveResume.
func (b *Bridge) serveOwed(w http.ResponseWriter, r *http.Request, s *session, release func()) (parked, served bool) {
	idx := b.streamIndex()
	if idx == nil {
		return false, false
	}
	sc := s.scope()
	holder := randomID()
	deadline := time.Now().Add(owedLease + owedLease/3)
	var tick <-chan time.Time
	for {
		ctx, cancel := storeCtx()
		owed, err := idx.OwedStreams(ctx, sc)
		cancel()
		if err != nil {
			b.log.Warn("face: cannot read a session's owed streams", "err", err)
			return false, false
		}
		held := false
		for _, o := range owed {
			ctx, cancel := storeCtx()
			ok, err := idx.ClaimOwed(ctx, sc, o.StreamID, holder, owedLease)
			cancel()
			if err != nil {
				b.log.Warn("face: cannot claim an owed stream", "err", err)
				return false, false
			}
			if !ok {
				held = true
				continue
			}
			ctx, cancel = storeCtx()
			rec, evs, err := b.events.EventsAfter(ctx, sc, sessionmap.EventID(o.StreamID, 0))
			cancel()
			if errors.Is(err, sessionmap.ErrNotFound) || (err == nil && !waitsOnTask(rec)) {
				// Expired, or too long to replay whole: nothing to resume.
				b.holdOwed(idx, sc, o.StreamID, holder).finish(true)
				continue
			}
			claim := b.holdOwed(idx, sc, o.StreamID, holder)
			if err != nil {
				b.log.Warn("face: cannot read an owed stream's events", "err", err)
				claim.finish(false)
				return false, false
			}
			b.log.Info("face: a GET without Last-Event-ID resumes a broken stream whose answer is owed", "method", rec.Method, "replayed", len(evs))
			return b.resumeStream(w, r, s, rec, evs, sessionmap.EventID(o.StreamID, 0), release, claim), true
		}
		if !held || time.Now().After(deadline) {
			return false, false
		}
		if tick == nil {
			t := time.NewTicker(owedLease / 4)
			defer t.Stop()
			tick = t.C
		}
		select {
		case <-tick:
		case <-r.Context().Done():
			return false, true
		case <-s.done():
			return false, false
		}
	}
}

// peerGone reports whether the client closed a connection the wait took
// over; false while the response is busy (its lock held) or not taken over
// (net/http then tells by the request's context).
func (o *leanOut) peerGone() bool {
	if !o.mu.TryLock() {
		return false
	}
	tc, ok := o.w.(*takenConn)
	o.mu.Unlock()
	return ok && peerClosed(tc.conn)
}

// oweCut is resumable.oweCut for the stream of a request whose client went
// away (leanRun.finish).
func (o *leanOut) oweCut(s *session) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sse && !o.done {
		o.res.oweCut(s)
	}
}
