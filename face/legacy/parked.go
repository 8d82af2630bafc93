package legacyface

import (
	"container/heap"
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksbridge/tasksbridge/ops/audit"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/steps"
	"github.com/tasksbridge/tasksbridge/runtime/watch"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/translate/waitrule"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// Parked waits: a blocked tasks/result over HTTP/1, or a plain tools/call
// waiting on the task the upstream made of it, costs no goroutine.
//
// net/http serves each connection on one goroutine, which is also the
// handler's, plus a background reader, and keeps the connection's buffers
// while the handler runs; a wait that blocks for minutes holds all of that
// (about 60 KiB, most of it stacks). So once a wait has nothing left to do
// but wait (await), it takes the connection over (Hijack) and returns: the
// handler, net/http's goroutines and its buffers are gone, and what remains
// is a parkCtl registered with the task's hub, the socket, and the
// request's small records. One hub per task holds the task's one watcher
// subscription and its cancel pin, and answers every parked wait of the
// task by the rules await follows for each snapshot; it runs only when one
// of its events comes (see parkHub), so a parked wait costs no goroutine
// even when it is the only wait on its task. The process's one keep-alive
// ticker writes SSE comments on parked streams as on any other; since
// nothing reads a parked connection any more, the ticker peeks at it for
// the client's close (peerClosed) and takes a failed write as the client
// gone too, which ends the wait as a disconnect ends a blocking one (the
// principal's waiter place is freed).
//
// The stream goes on exactly as it began: the response head was already
// sent (the wait primed its event stream, L-63) with Connection: close, and
// over HTTP/1.1 net/http sent it chunked, so each later event is one chunk
// and the end is the terminating chunk, then the connection closes. Events
// keep their ids and are stored before they are written (resume.go), so a
// parked stream is resumable like any other.
//
// A wait with a progress token keeps its goroutine (it sends progress at
// the keep-alive beat, L-62). A parked wait goes back onto a goroutine of
// its own (resume) when it has work again: the task asks for input that
// this session has not been shown (L-46; the questions go out on this
// stream and their answers come back as POSTs); it parks again once that is
// settled. HTTP/2, stdio, a response wrapper that cannot follow the
// takeover, disabled keep-alives (nothing would notice a client gone) and
// Config.DisableParkedWaits keep the blocking wait of await.

// errParked is await's return when the wait parked: the request is not
// over, the parked wait answers it.
var errParked = errors.New("face: the wait parked")

// ResponseDetacher is implemented by a ResponseWriter wrapper that observes
// the response (the bridge's wire meter) and can keep doing so after the
// face takes the connection over and its handler returns. DetachResponse
// is called once, just after the takeover: observe receives every byte of
// the response body written from then on (as the wrapper's Write would
// have, before it reaches the client), and end is called once when the
// response is over (gone: the client went away before it was answered).
// The face takes a connection over only when every wrapper between it and
// net/http implements this and unwraps (Unwrap) to the next.
type ResponseDetacher interface {
	DetachResponse() (observe func([]byte), end func(gone bool))
}

// parkState is where a parkable wait runs.
type parkState uint8

const (
	parkRunning parkState = iota // on a goroutine: the handler's, or a resumed one
	parkParked                   // registered with the task's hub, no goroutine
	parkEnded                    // answered or ended
)

// parkCtl is what a tasks/result needs to take its connection over, and
// then the parked wait itself.
type parkCtl struct {
	s       *session
	out     *leanOut
	release func() // the session's busy mark, released when the wait ends

	mu        sync.Mutex
	w         http.ResponseWriter // until the connection is taken over
	conn      *takenConn          // after
	ends      []func(gone bool)   // the detached wrappers' ends
	lr        *leanRun
	tail      parkTail
	mode      awaitMode               // what the wait answers (a parked wait)
	cause     error                   // why the wait was stopped (stop)
	rec       *parkedTask             // the task waited on (shared with its hub: read-only)
	cancelRun context.CancelCauseFunc // ends the running wait (parkRunning)
	hub       *parkHub
	// The small fields together: thousands of parked waits each keep one.
	state      parkState
	chunked    bool // net/http framed the response chunked (HTTP/1.1)
	waiterHeld bool // the principal's waiter place is held by the parked wait
	noPark     bool // the takeover failed once: never try again
}

// parkTail is what the request's handler does after a blocking wait
// returns, and a parked wait does when it ends instead.
type parkTail struct {
	audit bool // record the result in the audit log (tasksResult, toolsCall)
	// releaseTask: the request holds a place among the principal's calls
	// (L-73, toolsCall).
	releaseTask bool
	// abandon: the client of a plain call never saw the task, so its
	// cancel (or going away from a stream it cannot resume) abandons the
	// task, with these upstream options (toolsCall).
	abandon bool
	opts    *modernup.CallOptions // a copy of its own: only a plain call's wait keeps one
}

// setTail says what the wait's caller does after it; nil-safe.
func (pc *parkCtl) setTail(t parkTail) {
	if pc == nil {
		return
	}
	pc.mu.Lock()
	pc.tail = t
	pc.mu.Unlock()
}

// newParkCtl returns the takeover state of a request answered on w, or
// nil when its wait must block (see above).
func (b *Bridge) newParkCtl(w http.ResponseWriter, r *http.Request, s *session, release func()) *parkCtl {
	if b.cfg.DisableParkedWaits || b.cfg.KeepAlive <= 0 || r.ProtoMajor != 1 || release == nil || !detachable(w) {
		return nil
	}
	return &parkCtl{s: s, w: w, chunked: r.ProtoAtLeast(1, 1), release: release}
}

// detachable reports whether every wrapper from w down to net/http's own
// writer can follow a takeover, and that one can be hijacked.
func detachable(w http.ResponseWriter) bool {
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			_, ok := w.(http.Hijacker)
			return ok
		}
		if _, ok := w.(ResponseDetacher); !ok {
			return false // it may observe writes that would bypass it
		}
		w = u.Unwrap()
	}
}

// parkCtl returns the request's takeover state (nil: none).
func (ri *reqInfo) parkCtl() *parkCtl {
	if ri == nil || ri.out == nil {
		return nil
	}
	return ri.out.park
}

// begin binds the request's tail to the takeover state.
func (pc *parkCtl) begin(lr *leanRun) {
	pc.mu.Lock()
	pc.lr, pc.out = lr, lr.out
	pc.cancelRun = lr.cancel
	pc.mu.Unlock()
}

// takeWaiter hands a parked wait's place among the principal's waiters to
// the wait resuming it; false when it holds none.
func (pc *parkCtl) takeWaiter() bool {
	if pc == nil {
		return false
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	held := pc.waiterHeld
	pc.waiterHeld = false
	return held
}

// closed reports whether ch is closed, without blocking.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// park takes the connection over (the first time) and registers the wait
// (answering as mode says) with rec's hub. false: the connection cannot be
// taken over, or the bridge is draining; the caller blocks as before.
func (s *session) park(pc *parkCtl, rec sessionmap.Task, mode awaitMode) bool {
	b := s.b
	if b.drain.Err() != nil {
		return false
	}
	pc.mu.Lock()
	if pc.noPark || pc.state != parkRunning {
		pc.mu.Unlock()
		return false
	}
	if pc.conn == nil && !pc.takeOverLocked() {
		pc.noPark = true
		pc.mu.Unlock()
		return false
	}
	pc.state = parkParked
	// What the wait needs of the record, which the task's hub shares when
	// this wait starts it: a whole record is a few hundred bytes, and the
	// hub reads the record's state from the store at each step.
	pc.rec, pc.mode = parkedTaskOf(rec), mode
	pc.waiterHeld = true
	pc.cancelRun = nil
	pc.mu.Unlock()
	// Drain and the session's end reach a parked wait as they reach a
	// blocking one (await), but through one hook per session and one per
	// bridge rather than two context hooks per wait: thousands of parked
	// waits would otherwise each keep two registrations in the contexts.
	// A hook that ran before the wait was in its set is caught by the
	// checks after (the contexts end before their hooks run).
	s.addParked(pc)
	b.parking.hookDrain(b)
	b.parking.add(pc, pc.rec)
	// As the hooks do, the stop runs apart from the caller, which may
	// hold the session's locks.
	switch {
	case b.drain.Err() != nil:
		go pc.stop(errDrained)
	case s.lifeCtx().Err() != nil:
		go pc.stop(context.Canceled)
	}
	return true
}

// addParked registers a parked wait with its session, whose end stops it.
func (s *session) addParked(pc *parkCtl) {
	s.parkMu.Lock()
	if s.parked == nil {
		s.parked = map[*parkCtl]struct{}{}
	}
	s.parked[pc] = struct{}{}
	hook := !s.parkHooked
	s.parkHooked = true
	s.parkMu.Unlock()
	if hook {
		context.AfterFunc(s.lifeCtx(), func() {
			// Each on its own goroutine, as a hook per wait ran: a
			// wait's end writes to its client, which may be slow.
			for _, pc := range s.takeParked() {
				go pc.stop(context.Canceled)
			}
		})
	}
}

// removeParked forgets a wait that left the parked state.
func (s *session) removeParked(pc *parkCtl) {
	s.parkMu.Lock()
	delete(s.parked, pc)
	s.parkMu.Unlock()
}

// takeParked returns the session's parked waits (to stop them).
func (s *session) takeParked() []*parkCtl {
	s.parkMu.Lock()
	defer s.parkMu.Unlock()
	all := make([]*parkCtl, 0, len(s.parked))
	for pc := range s.parked {
		all = append(all, pc)
	}
	return all
}

// takeOverLocked hijacks the connection and moves the response onto it.
func (pc *parkCtl) takeOverLocked() bool {
	o := pc.out
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done || !o.sse {
		return false
	}
	conn, brw, err := http.NewResponseController(pc.w).Hijack()
	if err != nil {
		return false
	}
	// net/http flushed what it buffered; the read side is never read again
	// (the client sent its one request; Connection: close says there is no
	// other), so its buffers are dropped with brw.
	_ = brw
	tc := &takenConn{conn: conn, chunked: pc.chunked}
	for w := pc.w; ; {
		if d, ok := w.(ResponseDetacher); ok {
			observe, end := d.DetachResponse()
			tc.observe = append(tc.observe, observe)
			pc.ends = append(pc.ends, end)
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	pc.conn = tc
	pc.w = nil // net/http's writer and its connection state are released
	o.w = tc
	o.rc = http.NewResponseController(tc)
	// The request's context ends when the handler returns: from now on the
	// wait's own state says whether the client went away or cancelled, and
	// the request's contexts are let go.
	pc.lr.clientGone = o.isGone
	pc.lr.cancel(nil)
	pc.lr.cancel = func(error) {}
	// The request itself is let go too (its headers, its context chain):
	// a parked wait answers on an event stream, where an upstream refusal
	// is never relayed as an HTTP status, the one use of it after the
	// handler (relayAuth).
	pc.lr.r = nil
	// The params are kept (a resumed wait may need them): serveLean gave
	// them a copy of their own, apart from the message's buffer.
	// Nor does it keep the request's "over" context: the wait's own state
	// says when the client went away, and a resumed wait skips a nil one.
	if ri := pc.lr.ri; ri != nil {
		ri.over, ri.finish = nil, func() {}
	}
	return true
}

// stop ends the wait for cause: errDrained (Shutdown), errCallCancelled
// (notifications/cancelled), context.Canceled (the session ended, or the
// client went away).
func (pc *parkCtl) stop(cause error) {
	pc.mu.Lock()
	if pc.cause == nil && pc.state != parkEnded {
		pc.cause = cause
	}
	switch pc.state {
	case parkRunning:
		cancel := pc.cancelRun
		pc.mu.Unlock()
		if cancel != nil {
			cancel(cause)
		}
	case parkParked:
		// The waiter place goes back before the hub forgets the wait: once
		// the wait no longer counts as parked, the principal may open
		// another at once (L-72), and must not be refused for this one.
		if pc.waiterHeld {
			pc.waiterHeld = false
			pc.s.b.limits.releaseWaiter(pc.s.principalOrSession())
		}
		pc.unparkLocked(parkEnded)
		pc.mu.Unlock()
		var err error = context.Canceled
		if errors.Is(cause, errDrained) {
			err = errShuttingDown()
		}
		pc.end(nil, err)
	default:
		pc.mu.Unlock()
	}
}

// unparkLocked leaves the parked state for next: the hooks are stopped and
// the hub forgets the wait.
func (pc *parkCtl) unparkLocked(next parkState) {
	pc.state = next
	pc.s.removeParked(pc)
	if h := pc.hub; h != nil {
		pc.hub = nil
		pc.s.b.parking.remove(h, pc)
	}
}

// clientGone ends the wait of a client whose taken-over connection failed.
func (pc *parkCtl) clientGone() { pc.stop(context.Canceled) }

// settle answers a parked wait with the hub's verdict for its mode; a
// wait no longer parked ignores it.
func (pc *parkCtl) settle(v *verdict) {
	pc.mu.Lock()
	if pc.state != parkParked {
		pc.mu.Unlock()
		return
	}
	pc.unparkLocked(parkEnded)
	mode := pc.mode
	pc.mu.Unlock()
	res, err := v.get(mode)
	if res != nil && len(res.JSON) > largeAnswer {
		// A large answer may take a slow client a while (takenConn gives
		// it time in proportion): it goes out on a goroutine of its own,
		// so the hub's other waits do not queue behind it.
		go pc.end(res, err)
		return
	}
	pc.end(res, err)
}

// largeAnswer is the size beyond which a parked wait's answer is written off
// the hub's drive: smaller ones fit in the socket's send buffer, so
// writing them does not block.
const largeAnswer = 64 << 10

// verdict is the hub's answer to its parked waits, built once per mode
// (a tasks/result and a plain tools/call answer the same end differently).
type verdict struct {
	f    func(awaitMode) (*rawResult, error)
	done [2]bool
	res  [2]*rawResult
	err  [2]error
}

func (v *verdict) get(m awaitMode) (*rawResult, error) {
	if !v.done[m] {
		v.res[m], v.err[m] = v.f(m)
		v.done[m] = true
	}
	return v.res[m], v.err[m]
}

// always is a verdict that is err whatever the mode.
func always(err error) func(awaitMode) (*rawResult, error) {
	return func(awaitMode) (*rawResult, error) { return nil, err }
}

// verdictOf is the verdict of a step that ends the waits, per mode.
func verdictOf(st waitStep) func(awaitMode) (*rawResult, error) {
	return func(m awaitMode) (*rawResult, error) { return asRaw(st.answer(m)) }
}

// resume puts a parked wait back onto a goroutine of its own (it has
// questions to present); await parks it again once it has nothing to do.
func (pc *parkCtl) resume() {
	pc.mu.Lock()
	if pc.state != parkParked {
		pc.mu.Unlock()
		return
	}
	pc.unparkLocked(parkRunning)
	ctx, cancel := context.WithCancelCause(context.Background())
	pc.cancelRun = cancel
	rec, lr, mode := pc.rec, pc.lr, pc.mode
	pc.mu.Unlock()
	s := pc.s
	go func() {
		// A parked wait has no progress token (see above).
		res, err := asRaw(s.await(withReqInfo(ctx, lr.ri), lr.ri, rec.record(), mode, nil))
		if errors.Is(err, errParked) {
			return
		}
		cancel(nil)
		pc.mu.Lock()
		pc.state = parkEnded
		pc.cancelRun = nil
		pc.mu.Unlock()
		pc.end(res, err)
	}()
}

// end is the parked request's tail, run once: what tasksResult, await and
// runLean do after a blocking wait, then the connection is closed and the
// session and the wrappers are told.
func (pc *parkCtl) end(res *rawResult, err error) {
	s := pc.s
	pc.mu.Lock()
	held := pc.waiterHeld
	pc.waiterHeld = false
	rec, lr, tail, cause := pc.rec, pc.lr, pc.tail, pc.cause
	pc.mu.Unlock()
	if tail.audit {
		s.auditErr(audit.ActionResult, rec.id, rec.tool, err)
	}
	if tail.abandon && errors.Is(err, context.Canceled) && (errors.Is(cause, errCallCancelled) || !pc.out.resumable()) {
		// As toolsCall after a blocking wait: notifications/cancelled, or
		// a client gone from a stream it cannot resume.
		s.b.abandon(rec.record(), *tail.opts)
	}
	if held {
		s.b.limits.releaseWaiter(s.principalOrSession())
	}
	if tail.releaseTask {
		s.b.limits.releaseTask(s.principalOrSession())
	}
	lr.finish(res, err)
	gone := pc.out.closeTaken()
	for _, e := range pc.ends {
		e(gone)
	}
	pc.release()
}

// isGone reports whether a write to the taken-over connection failed.
func (o *leanOut) isGone() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.gone
}

// markGoneLocked records a failed write; true when the stream runs on a
// taken-over connection (whose failed write is the only sign of a client
// gone).
func (o *leanOut) markGoneLocked() bool {
	if _, ok := o.w.(*takenConn); !ok {
		return false
	}
	o.gone = true
	return true
}

// closeTaken ends the response on the taken-over connection (the
// terminating chunk) and closes it; it reports whether the client was gone.
func (o *leanOut) closeTaken() (gone bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.done = true
	if tc, ok := o.w.(*takenConn); ok {
		tc.close()
		o.gone = o.gone || tc.failed
	}
	return o.gone
}

// takenConn is the response writer of a taken-over connection: each write
// goes out at once (one syscall: chunk header, data and trailer in one
// buffer, rather than httputil's chunked writer's three), under a write
// deadline, so a client that stopped reading can hold neither the
// keep-alive ticker nor a hub for long: keepAliveWriteTimeout, plus a second
// per minClientRate bytes for a large write. A write that misses it loses
// nothing a resumable client cannot get again: the event was stored before
// it was written.
type takenConn struct {
	conn    net.Conn
	chunked bool
	observe []func([]byte) // the detached wrappers'
	failed  bool           // guarded by the leanOut's lock, as every write is
	hdr     http.Header
}

var errTakenConnFailed = errors.New("face: the client's connection failed")

// minClientRate (bytes per second) is the slowest reader a large write on a
// taken-over connection waits for.
const minClientRate = 16 << 10

func (t *takenConn) Header() http.Header {
	if t.hdr == nil {
		t.hdr = http.Header{} // the head went out before the takeover
	}
	return t.hdr
}

func (t *takenConn) WriteHeader(int) {}

func (t *takenConn) Write(p []byte) (int, error) {
	if t.failed {
		return 0, errTakenConnFailed
	}
	if len(p) == 0 {
		return 0, nil
	}
	for _, f := range t.observe {
		f(p) // recorded before the client can have read it, as before the takeover
	}
	_ = t.conn.SetWriteDeadline(time.Now().Add(keepAliveWriteTimeout + time.Duration(len(p)/minClientRate)*time.Second))
	var err error
	if t.chunked {
		b := getBuf()
		b.WriteString(strconv.FormatInt(int64(len(p)), 16))
		b.WriteString("\r\n")
		b.Write(p)
		b.WriteString("\r\n")
		_, err = t.conn.Write(b.Bytes())
		putBuf(b)
	} else {
		_, err = t.conn.Write(p)
	}
	if err != nil {
		t.failed = true
		return 0, err
	}
	return len(p), nil
}

// FlushError: every write already went out.
func (t *takenConn) FlushError() error {
	if t.failed {
		return errTakenConnFailed
	}
	return nil
}

func (t *takenConn) SetWriteDeadline(d time.Time) error { return t.conn.SetWriteDeadline(d) }

func (t *takenConn) close() {
	if t.chunked && !t.failed {
		_ = t.conn.SetWriteDeadline(time.Now().Add(keepAliveWriteTimeout))
		if _, err := t.conn.Write([]byte("0\r\n\r\n")); err != nil {
			t.failed = true
		}
	}
	_ = t.conn.Close()
}

// parking is the process's parked waits: one hub per task with waits.
type parking struct {
	// The hubs' record expiries (L-64), soonest first, under one timer.
	expMu    sync.Mutex
	expQueue expiryQueue
	expTimer *time.Timer

	drainHook sync.Once // the bridge's drain stops every parked wait
	mu        sync.Mutex
	hubs      map[string]*parkHub // by local task id
	n         atomic.Int64        // parked waits
	driving   atomic.Int64        // hubs with a drive running

	stepsOnce sync.Once
	steps     *steps.Runner // the hubs' drives (runner)
	moved     heartbeat     // fires when n changes or driving drops to 0 (tests wait on it)
}

// hubSteps bounds the hubs' drives running at once: a burst of waits
// parking (or of their tasks' snapshots) would otherwise start a drive
// goroutine per hub, each waiting its turn on the store's reads. A drive
// gives its place up before it writes to clients (settleAll).
const hubSteps = 128

// runner is the parking's steps runner (made at first use).
func (p *parking) runner() *steps.Runner {
	p.stepsOnce.Do(func() { p.steps = steps.New(hubSteps) })
	return p.steps
}

// hookDrain makes the bridge's drain stop every parked wait (once).
func (p *parking) hookDrain(b *Bridge) {
	p.drainHook.Do(func() {
		context.AfterFunc(b.drain, func() {
			p.mu.Lock()
			var all []*parkCtl
			for _, h := range p.hubs {
				h.eachWaiterLocked(func(pc *parkCtl) { all = append(all, pc) })
			}
			p.mu.Unlock()
			for _, pc := range all {
				go pc.stop(errDrained)
			}
		})
	})
}

// ParkedWaits returns how many waits are parked (no goroutine of their
// own): tests, diagnostics.
func (b *Bridge) ParkedWaits() int { return int(b.parking.n.Load()) }

// ParkedMoved returns a channel closed when the number of parked waits next
// changes (with ParkedWaits: a test waits for its waits to park).
func (b *Bridge) ParkedMoved() <-chan struct{} { return b.parking.moved.next() }

// parkHub answers the parked waits of one task: one watcher subscription
// for all of them, and no goroutine while nothing happens. The hub is a
// state machine driven by its events (a snapshot offered or the
// subscription's end, a cancel pinned, the record's expiry, a wait come or
// gone): each event pokes it, and one goroutine at a time (drive) takes
// the pending events in turn and exits when none is left. Thousands of
// parked waits on distinct tasks thus cost their records, not a stack each.
type parkHub struct {
	b    *Bridge
	rec  *parkedTask           // the first wait's (read-only)
	opts *modernup.CallOptions // the binding's options when the hub started (begin binds again; immutable)
	// The parked waits (guarded by parking.mu): on distinct tasks a hub has
	// one, kept without a map; more are kept in the map.
	one  *parkCtl
	more map[*parkCtl]struct{}

	// Driven state (owned by the one drive running).
	sl     *steps.Slot                         // the drive's place on parking.runner (nil between drives)
	failed func(awaitMode) (*rawResult, error) // the watcher could not be attached: every wait gets this
	sub    *watch.Subscription
	// expAt is when the record expires (UnixNano; its place in the
	// parking's expiry queue is expIdx, -1 when not queued): one process
	// timer for every hub's expiry rather than a timer each.
	expAt  int64
	expIdx int32

	// kicked: a wait came or left; expired: the record's expiry passed;
	// pinned: a cancel was pinned on the task (signalPin finds the hub by
	// its task's id, parking.pin). Flags the hub's poke is sent after, not
	// channels or registrations: a parked wait's hub keeps none for them.
	kicked  atomic.Bool
	expired atomic.Bool
	pinned  atomic.Bool

	mu sync.Mutex
	// The small fields together: thousands of hubs each keep one.
	busy    bool // a drive runs (mu)
	dirty   bool // an event came since the drive last looked (mu)
	ended   bool // (mu)
	dead    bool // the hub ended: a new wait starts a new hub (parking.mu)
	started bool // (the drive)
}

// parkedTask is what a parked wait and its task's hub keep of the task's
// record: its owner, its ids, its tool (the audit) and when it expires
// (L-64). Its state (status, result, input keys, a pinned cancel) is read
// from the store at each step of the hub.
type parkedTask struct {
	scope      sessionmap.Scope
	id         string
	upstreamID string
	tool       string
	createdAt  time.Time
	ttlMs      int64
	limited    bool // ttlMs holds (a nil TTLMs is unlimited)
}

func parkedTaskOf(rec sessionmap.Task) *parkedTask {
	t := &parkedTask{scope: rec.Scope, id: rec.ID, upstreamID: rec.UpstreamTaskID, tool: rec.ToolName, createdAt: rec.CreatedAt}
	if rec.TTLMs != nil {
		t.ttlMs, t.limited = *rec.TTLMs, true
	}
	return t
}

// record is the task as a wait resumed from it, a bind or an abandon take
// it: the record of a live task this process follows (a wait parks only
// on one), which every use reads for its owner, ids and expiry only.
func (t *parkedTask) record() sessionmap.Task {
	rec := sessionmap.Task{ID: t.id, Scope: t.scope, Origin: sessionmap.OriginUpstreamTask, UpstreamTaskID: t.upstreamID,
		ToolName: t.tool, Status: sessionmap.StatusWorking, CreatedAt: t.createdAt}
	if t.limited {
		ttl := t.ttlMs
		rec.TTLMs = &ttl
	}
	return rec
}

// expiresAt is the record's own end (createdAt + ttl); false: none.
func (t *parkedTask) expiresAt() (time.Time, bool) {
	if !t.limited || t.createdAt.IsZero() {
		return time.Time{}, false
	}
	return t.createdAt.Add(time.Duration(t.ttlMs) * time.Millisecond), true
}

// key is the task's watcher key.
func (h *parkHub) key() watch.Key { return watch.Key{Target: h.b.target, TaskID: h.rec.upstreamID} }

// The hub's waits; the caller holds parking.mu.
func (h *parkHub) addWaiterLocked(pc *parkCtl) {
	if h.one == nil {
		h.one = pc
		return
	}
	if h.more == nil {
		h.more = map[*parkCtl]struct{}{}
	}
	h.more[pc] = struct{}{}
}

func (h *parkHub) removeWaiterLocked(pc *parkCtl) bool {
	if h.one == pc {
		h.one = nil
		return true
	}
	if _, ok := h.more[pc]; ok {
		delete(h.more, pc)
		return true
	}
	return false
}

func (h *parkHub) waitersLocked() int {
	n := len(h.more)
	if h.one != nil {
		n++
	}
	return n
}

func (h *parkHub) eachWaiterLocked(f func(*parkCtl)) {
	if h.one != nil {
		f(h.one)
	}
	for pc := range h.more {
		f(pc)
	}
}

func (p *parking) add(pc *parkCtl, rec *parkedTask) {
	b := pc.s.b
	p.mu.Lock()
	if p.hubs == nil {
		p.hubs = map[string]*parkHub{}
	}
	h := p.hubs[rec.id]
	start := h == nil || h.dead
	if start {
		h = &parkHub{b: b, rec: rec, expIdx: -1}
		if bd := b.binding(h.key()); bd != nil {
			bd.mu.Lock()
			h.opts = bd.opts
			bd.mu.Unlock()
		}
		p.hubs[rec.id] = h
	}
	h.addWaiterLocked(pc)
	p.n.Add(1)
	p.mu.Unlock()
	p.moved.fire()
	pc.mu.Lock()
	if pc.state == parkParked {
		pc.hub = h
		pc.mu.Unlock()
	} else {
		// Ended by a hook before it reached the hub.
		pc.mu.Unlock()
		p.remove(h, pc)
	}
	if start {
		// The hub counts as the bridge's background work until it ends.
		b.bgWG.Add(1)
	}
	h.kicked.Store(true)
	h.poke()
}

func (p *parking) remove(h *parkHub, pc *parkCtl) {
	p.mu.Lock()
	ok := h.removeWaiterLocked(pc)
	p.mu.Unlock()
	if ok {
		p.n.Add(-1)
		p.moved.fire()
		h.kicked.Store(true)
		h.poke()
	}
}

// take removes and returns the hub's waits that match keep (nil: all).
func (p *parking) take(h *parkHub, keep func(*parkCtl) bool) []*parkCtl {
	p.mu.Lock()
	var out []*parkCtl
	h.eachWaiterLocked(func(pc *parkCtl) {
		if keep == nil || keep(pc) {
			out = append(out, pc)
		}
	})
	for _, pc := range out {
		h.removeWaiterLocked(pc)
	}
	p.mu.Unlock()
	if len(out) > 0 {
		p.n.Add(-int64(len(out)))
		p.moved.fire()
	}
	return out
}

// retire ends the hub when it has no waits left.
func (p *parking) retire(h *parkHub) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h.waitersLocked() > 0 {
		return false
	}
	h.dead = true
	if p.hubs[h.rec.id] == h {
		delete(p.hubs, h.rec.id)
	}
	return true
}

// pin tells the hub of task id, if any, that a cancel was pinned on it. A
// hub added after the lookup reads the pinned record in its first step (the
// pin was stored before signalPin), as it does for a cancel pinned while a
// wait moved to it.
func (p *parking) pin(id string) {
	p.mu.Lock()
	h := p.hubs[id]
	p.mu.Unlock()
	if h != nil {
		h.pinned.Store(true)
		h.poke()
	}
}

// settleAll answers every parked wait of the hub with the verdict f.
func (h *parkHub) settleAll(f func(awaitMode) (*rawResult, error)) {
	h.sl.Detach() // answers are written to the clients' sockets
	v := &verdict{f: f}
	for _, pc := range h.b.parking.take(h, nil) {
		pc.settle(v)
	}
}

// poke tells the hub that an event is pending; a drive runs unless one
// does already (it looks again before it exits).
func (h *parkHub) poke() {
	h.mu.Lock()
	h.dirty = true
	if h.busy || h.ended {
		h.mu.Unlock()
		return
	}
	h.busy = true
	h.mu.Unlock()
	h.b.parking.driving.Add(1)
	h.b.parking.runner().Run(h.drive)
}

// drive takes the hub's pending events in turn, one per turn as a select
// loop would, and exits once none is left or the hub has no waits left (it
// then ends the hub). It runs as a step in sl (see parking.runner).
func (h *parkHub) drive(sl *steps.Slot) {
	p := &h.b.parking
	h.sl = sl
	defer func() {
		if p.driving.Add(-1) == 0 {
			p.moved.fire()
		}
	}()
	for {
		h.mu.Lock()
		if !h.dirty {
			h.sl = nil // before busy: the next drive sets its own
			h.busy = false
			h.mu.Unlock()
			return
		}
		h.dirty = false
		h.mu.Unlock()
		for {
			more, retired := h.turn()
			if retired {
				h.mu.Lock()
				h.sl = nil
				h.ended, h.busy = true, false
				h.mu.Unlock()
				h.end()
				return
			}
			if !more {
				break
			}
		}
	}
}

// turn handles at most one pending event; more: one was handled (look
// again), retired: the hub has no waits left and ended.
func (h *parkHub) turn() (more, retired bool) {
	b := h.b
	p := &b.parking
	if !h.started {
		h.started = true
		h.begin()
		more = true
	} else if h.failed != nil {
		h.settleAll(h.failed)
	} else if h.expired.Swap(false) {
		more = true
		// The record's own end (createdAt + ttl, L-64), even when no
		// snapshot comes.
		p.expireAt(h, time.Now().Add(expiryRecheck))
		h.step(h.sub.Latest())
	} else if h.pinned.Swap(false) {
		more = true
		h.step(h.sub.Latest())
	} else if h.kicked.Swap(false) {
		more = true
		// A wait came (it must see the state it may have missed while it
		// moved here) or left (the hub may be done).
		p.mu.Lock()
		n := h.waitersLocked()
		p.mu.Unlock()
		if n > 0 {
			h.step(h.sub.Latest())
		}
	} else {
		select {
		case snap, ok := <-h.sub.C:
			more = true
			if !ok {
				h.settleAll(always(errShuttingDown()))
				break
			}
			h.step(snap)
		default:
		}
	}
	return more, p.retire(h)
}

// begin attaches the hub to the task's watcher, pins and expiry.
func (h *parkHub) begin() {
	b := h.b
	// Bind again, as await does right before it attaches: a terminal
	// snapshot relayed from the replica holding the task's lease drops this
	// replica's binding (observe) before that replica's record write lands,
	// and a watcher started without one cannot read the upstream.
	b.bind(h.rec.record(), h.opts)
	sub, err := b.watch.AttachNotify(context.Background(), h.key(), h.poke)
	if err != nil {
		// As await: closed watchers are a shutdown; a task that finished
		// meanwhile is answered from its record.
		h.failed = always(errShuttingDown())
		if !errors.Is(err, watch.ErrClosed) {
			ctx, cancel := storeCtx()
			cur, gerr := b.store.GetTask(ctx, h.rec.scope, h.rec.id)
			cancel()
			if gerr == nil && !live(cur) {
				h.failed = verdictOf(decideWait(waitInput{rec: cur}))
			} else {
				h.failed = always(rpc.Errorf(rpc.CodeInternalError, "internal error: watch task: %v", err))
			}
		}
		h.settleAll(h.failed)
		return
	}
	h.sub = sub
	if at, ok := h.rec.expiresAt(); ok {
		b.parking.expireAt(h, at)
	}
}

// end lets go of what the hub holds; it runs once, after the hub retired.
func (h *parkHub) end() {
	h.b.parking.unexpire(h)
	if h.sub != nil {
		h.sub.Close()
	}
	h.b.bgWG.Done()
}

// step judges the task from the record and the snapshot snap by the rule
// every wait follows (decideWait), and answers or resumes the parked waits.
// The record is read first, always: it holds a cancel pinned or a
// completion recorded while a wait moved here from its own subscription.
// A terminal snapshot answers even before it is recorded: the watchers hand
// it to waiters before the durable write (observe), and that is safe for
// the reasons given there (a terminal upstream state never changes, reads
// agree through withTerminal, a crash before the write leaves the record
// live and the next request reads the same end upstream); a cancel pinned
// meanwhile still wins, because cur was read after the snapshot arrived.
func (h *parkHub) step(snap watch.Snapshot) {
	b := h.b
	ctx, cancel := storeCtx()
	cur, err := b.store.GetTask(ctx, h.rec.scope, h.rec.id)
	cancel()
	st := decideWait(waitInput{rec: cur, recErr: err, snap: snap, target: b.target})
	switch st.Kind {
	case waitrule.Fail:
		st.rec = h.rec.record() // a lost record is named by the id the waits know
		h.settleAll(verdictOf(st))
		return
	case waitrule.Answer:
		h.sl.Detach() // answers are written to the clients' sockets
		v := &verdict{f: verdictOf(st)}
		for _, pc := range b.parking.take(h, nil) {
			pc.s.forgetPresented(h.rec.id)
			pc.settle(v)
		}
		return
	}
	if b.authExpired(snap, h.rec.scope.Principal) {
		h.settleAll(always(errAuthorizationExpired())) // the task goes on (creds.go)
		return
	}
	if st.Kind == waitrule.Present {
		// Questions: a wait whose session has not been shown one of them
		// goes back onto a goroutine to present it (or to end the task,
		// when the client cannot answer it, L-82).
		h.sl.Detach()
		for _, pc := range b.parking.take(h, func(pc *parkCtl) bool {
			return decideWait(waitInput{rec: cur, snap: snap, target: b.target, shown: pc.s.shown(cur.ID)}).Kind == waitrule.Present
		}) {
			pc.resume()
		}
	}
}

// shown reports, for the wait rule, whether input key k of task id was
// shown to this session already or answered by this process (M-30, L-46).
func (s *session) shown(id string) func(k string) bool {
	return func(k string) bool {
		if s.b.wasSent(id, k) {
			return true
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.presented[id][k]
	}
}

// expireAt (re)schedules the hub's expiry at at: the process's expiry timer
// then sets the hub's expired flag and pokes it (fireExpiries).
func (p *parking) expireAt(h *parkHub, at time.Time) {
	p.expMu.Lock()
	defer p.expMu.Unlock()
	h.expAt = at.UnixNano()
	if h.expIdx >= 0 {
		heap.Fix(&p.expQueue, int(h.expIdx))
	} else {
		heap.Push(&p.expQueue, h)
	}
	p.armLocked()
}

// unexpire takes the hub out of the expiry queue (it ended).
func (p *parking) unexpire(h *parkHub) {
	p.expMu.Lock()
	defer p.expMu.Unlock()
	if h.expIdx >= 0 {
		heap.Remove(&p.expQueue, int(h.expIdx))
		p.armLocked()
	}
}

// armLocked sets the timer for the soonest expiry.
func (p *parking) armLocked() {
	if len(p.expQueue) == 0 {
		if p.expTimer != nil {
			p.expTimer.Stop()
		}
		return
	}
	d := max(time.Until(time.Unix(0, p.expQueue[0].expAt)), 0)
	if p.expTimer == nil {
		p.expTimer = time.AfterFunc(d, p.fireExpiries)
		return
	}
	p.expTimer.Reset(d)
}

// fireExpiries tells the hubs whose record expired; each is queued again
// by its drive when the store still has the record (expiryRecheck).
func (p *parking) fireExpiries() {
	now := time.Now().UnixNano()
	var due []*parkHub
	p.expMu.Lock()
	for len(p.expQueue) > 0 && p.expQueue[0].expAt <= now {
		due = append(due, heap.Pop(&p.expQueue).(*parkHub))
	}
	p.armLocked()
	p.expMu.Unlock()
	for _, h := range due {
		h.expired.Store(true)
		h.poke()
	}
}

// expiryQueue is a min-heap of hubs by expAt (container/heap).
type expiryQueue []*parkHub

func (q expiryQueue) Len() int           { return len(q) }
func (q expiryQueue) Less(i, j int) bool { return q[i].expAt < q[j].expAt }
func (q expiryQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].expIdx, q[j].expIdx = int32(i), int32(j)
}
func (q *expiryQueue) Push(x any) {
	h := x.(*parkHub)
	h.expIdx = int32(len(*q))
	*q = append(*q, h)
}
func (q *expiryQueue) Pop() any {
	old := *q
	h := old[len(old)-1]
	old[len(old)-1] = nil
	h.expIdx = -1
	*q = old[:len(old)-1]
	return h
}
