package legacyface

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// Resumable streams (Streamable HTTP 2025-11-25, resumability): a tools/call or
// tasks/result answered as an event stream primes it at once with an event
// id and empty data, and gives every later event an id, after storing the
// event in the EventStore shared by the replicas. A client whose stream
// breaks reconnects with GET and Last-Event-ID, to any replica: it gets the
// events of that same stream after that id (never another stream's), then
// the answer, which the replica produces by waiting on the task the stream
// record names. A tools/call the upstream answers synchronously is never
// re-issued (M-13): its resumed stream replays what was stored and, when the
// answer is not among it, answers with an error saying so.
//
// A client that lost a resumed stream before its first event id and comes
// back with a GET naming no stream gets the answer owed to it all the same
// (resumeowed.go).

// resumeRetry is the SSE retry the priming event announces: how long a
// client waits before it reconnects (the TypeScript SDK otherwise waits 1 s,
// then 1.5 s, and gives up after two attempts).
const resumeRetry = 500 * time.Millisecond

// storeTimeout bounds one event-store call; a stream whose store write
// fails goes on without ids rather than stall.
const storeTimeout = 5 * time.Second

// resumable is the stored side of one lean event stream. Its fields are
// guarded by the leanOut's lock.
type resumable struct {
	b      *Bridge
	id     string // the stream's id
	method string // the method of the request it answers
	taskID string // the task it waits on, once there is one
	// rec is the record to store until the stream is open (prime); an
	// open stream, perhaps parked for hours, keeps only the three above.
	rec  *sessionmap.StreamRecord
	open bool // the record is stored: events get ids

	// claim is the stream's entry in the stream index while a resumed
	// stream serves it (resumeowed.go); nil on a first stream.
	claim *owedClaim
}

// delivered tells the stream's claim, if any, whether the answer reached
// the client's connection: the entry is settled, or released for a GET
// that names no stream.
func (r *resumable) delivered(ok bool) {
	if r != nil && r.claim != nil {
		r.claim.finish(ok)
	}
}

// newResumable prepares the record of a stream answering req; nil when the
// bridge keeps no streams.
func (b *Bridge) newResumable(s *session, req *jsonrpc.Request) *resumable {
	if b.events == nil || !req.ID.IsValid() {
		return nil
	}
	id, err := json.Marshal(req.ID.Raw())
	if err != nil {
		return nil
	}
	return newStream(b, sessionmap.StreamRecord{
		ID: randomID(), Scope: s.scope(), Method: req.Method, Params: req.Params, RequestID: id,
	}, false, nil)
}

// newStream is the resumable of the stream rec (open: already stored).
func newStream(b *Bridge, rec sessionmap.StreamRecord, open bool, claim *owedClaim) *resumable {
	r := &resumable{b: b, id: rec.ID, method: rec.Method, taskID: rec.TaskID, open: open, claim: claim}
	if !open {
		r.rec = &rec
	}
	return r
}

func (r *resumable) isOpen() bool { return r != nil && r.open }

func storeCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), storeTimeout)
}

// prime stores the stream's record and sends the priming event (an id,
// the retry delay, no data), so the client can resume even before the first
// message.
func (r *resumable) prime(w http.ResponseWriter, rc *http.ResponseController) {
	if r.open {
		return
	}
	ctx, cancel := storeCtx()
	err := r.b.events.OpenStream(ctx, *r.rec, r.b.cfg.StreamRetention)
	cancel()
	if err != nil {
		r.b.log.Warn("face: cannot record an event stream; it will not be resumable", "err", err)
		return
	}
	r.open, r.rec = true, nil
	ev := "id: " + sessionmap.EventID(r.id, 0) + "\nretry: " + strconv.FormatInt(resumeRetry.Milliseconds(), 10) + "\ndata: \n\n"
	if _, err := w.Write([]byte(ev)); err == nil {
		_ = rc.Flush()
	}
}

// store keeps one event and returns its id ("" when the stream is not
// resumable or the store failed).
func (r *resumable) store(msg []byte) string {
	if !r.isOpen() {
		return ""
	}
	ctx, cancel := storeCtx()
	defer cancel()
	id, err := r.b.events.AppendEvent(ctx, r.id, msg, r.b.cfg.StreamRetention)
	if err != nil {
		r.b.log.Warn("face: cannot record a stream event; it goes out without an id", "err", err)
		return ""
	}
	return id
}

// bindTask records that the stream's request now waits on task id, so a
// resumed stream waits on it too.
func (o *leanOut) bindTask(id string) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	r := o.res
	if r == nil {
		return
	}
	r.taskID = id
	if !r.open {
		r.rec.TaskID = id // OpenStream stores it
		return
	}
	ctx, cancel := storeCtx()
	defer cancel()
	if err := r.b.events.SetStreamTask(ctx, r.id, id, r.b.cfg.StreamRetention); err != nil {
		r.b.log.Warn("face: cannot record the task of an event stream", "err", err)
	}
}

// resumable reports whether a client that loses this stream can come back
// to it (so its going away is no cancellation).
func (o *leanOut) resumable() bool {
	if o == nil {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.res != nil
}

// resumableOpen reports whether the client holds an event id of this
// stream, so it can resume it elsewhere.
func (o *leanOut) resumableOpen() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.sse && o.res.isOpen()
}

// messageKind tells a stored event's JSON-RPC message apart.
func messageKind(msg []byte) (request, response bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return false, false
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	return hasID && m.Method != "", hasID && m.Method == ""
}

// serveResume answers GET with Last-Event-ID: the events of that stream
// after that id, then the stream's answer. An id of no stream of this
// session (unknown, expired, malformed, another session's) gets 404. It
// reports whether the resumed wait parked (parked.go): then the wait calls
// release when it ends, else the caller does.
func (b *Bridge) serveResume(w http.ResponseWriter, r *http.Request, s *session, last string, release func()) (parked bool) {
	if b.events == nil {
		http.Error(w, "Not Found: this bridge keeps no event streams to resume", http.StatusNotFound)
		return false
	}
	rec, evs, err := b.events.EventsAfter(r.Context(), s.scope(), last)
	if errors.Is(err, sessionmap.ErrNotFound) {
		http.Error(w, "Not Found: no stream of this session has that Last-Event-ID (it may have expired); send the request again", http.StatusNotFound)
		return false
	}
	if err != nil {
		b.log.Warn("face: cannot read a stream's events", "err", err)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "Service Unavailable: cannot read the stream's events; try again", http.StatusServiceUnavailable)
		return false
	}
	if rec.Method == listenStream {
		b.resumeListen(w, r, s, rec, evs)
		return false
	}
	// The client names this stream: it serves the answer now, whoever held
	// the stream's entry in the index before (a replica that died, or one
	// whose client went away).
	return b.resumeStream(w, r, s, rec, evs, last, release, b.oweStream(s, rec))
}

// resumeStream serves a resumed request stream: the stored events after
// the client's last one (evs), then the answer. last is the id the stream
// starts with when nothing is replayed; claim is the stream's entry in the
// stream index, which resumeStream settles or releases (nil: none).
func (b *Bridge) resumeStream(w http.ResponseWriter, r *http.Request, s *session, rec sessionmap.StreamRecord, evs []sessionmap.StreamEvent, last string, release func(), claim *owedClaim) (parked bool) {
	id, err := streamRequestID(rec)
	if err != nil {
		claim.finish(true) // an unreadable record owes nothing anyone could deliver
		http.Error(w, "Not Found: no stream of this session has that Last-Event-ID", http.StatusNotFound)
		return false
	}

	out := newLeanOut(w)
	out.res = newStream(b, rec, true, claim)
	claim.watchPeer(out.peerGone)
	if rec.Method == legacy.MethodTasksResult || rec.Method == legacy.MethodToolsCall {
		out.park = b.newParkCtl(w, r, s, release)
	}
	out.mu.Lock()
	out.commitLocked()
	answered, sent := false, false
	for _, ev := range evs {
		req, resp := messageKind(ev.Data)
		if req {
			// A server→client request (an input request) the client never
			// saw: the wait below presents it again if it is still
			// unanswered, under a fresh id; replaying it too would ask twice.
			continue
		}
		if err := writeEventID(w, out.rc, ev.ID, ev.Data); err != nil {
			out.done = true
			out.mu.Unlock()
			claim.finish(false)
			return false
		}
		sent = true
		answered = answered || resp
	}
	if answered {
		out.done = true
		out.mu.Unlock()
		claim.finish(true)
		return false
	}
	if !sent {
		// Nothing replayed: the resumed stream still starts with an event
		// id, at once. A client's resumption token belongs to the stream
		// it reads (the TypeScript SDK forgets the old one on reconnect):
		// a stream that breaks again before its first event would be
		// resumed without Last-Event-ID — a GET the bridge cannot tie to
		// this wait — and the request would run into its timeout although
		// the task ends. Its id is the one the client sent: resuming from
		// it again replays the same (nothing, or unanswered questions the
		// wait asks again).
		ev := "id: " + last + "\nretry: " + strconv.FormatInt(resumeRetry.Milliseconds(), 10) + "\ndata: \n\n"
		if _, err := w.Write([]byte(ev)); err != nil {
			out.done = true
			out.mu.Unlock()
			claim.finish(false)
			return false
		}
	}
	_ = out.rc.Flush()
	out.mu.Unlock()
	b.log.Info("face: a client resumed an event stream", "method", rec.Method, "replayed", len(evs))

	ri := httpReqInfo(r, s, rec.Method, rec.Params)
	var run func(ctx context.Context) (*rawResult, error)
	switch {
	case rec.Method == legacy.MethodTasksResult:
		run = func(ctx context.Context) (*rawResult, error) { return s.leanDispatch(ctx, ri, rec.Method) }
	case rec.Method == legacy.MethodToolsCall && rec.TaskID != "":
		// The upstream made a task for the plain call: wait on it again.
		run = func(ctx context.Context) (*rawResult, error) {
			task, err := s.lookup(ctx, rec.TaskID)
			if err != nil {
				return nil, err
			}
			var call struct {
				Meta struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			}
			_ = json.Unmarshal(rec.Params, &call)
			return asRaw(s.await(ctx, ri, task, awaitPlain, call.Meta.ProgressToken))
		}
	default:
		run = func(context.Context) (*rawResult, error) {
			return nil, rpc.Errorf(rpc.CodeInternalError,
				"the stream of this %s broke before its answer and the call cannot be resumed: the bridge never sends a tool call upstream twice; call the tool again if that is safe", rec.Method)
		}
	}
	parked = b.runLean(r, s, ri, out, id, run)
	if !parked {
		// The request is over: an answer that went out settled the claim
		// already (leanOut.answer); any other end leaves the answer owed.
		claim.finish(false)
	}
	return parked
}

// streamRequestID is the JSON-RPC id of the request a stream answers.
func streamRequestID(rec sessionmap.StreamRecord) (jsonrpc.ID, error) {
	var idv any
	if err := json.Unmarshal(rec.RequestID, &idv); err != nil {
		return jsonrpc.ID{}, err
	}
	return jsonrpc.MakeID(idv)
}

// listenStream is the Method of a standalone GET stream's record.
const listenStream = "GET"

// newListenStream prepares the record of a session's standalone GET
// stream, whose injected notifications (notifications/tasks/status, L-61)
// get ids and are kept like a request stream's.
func (b *Bridge) newListenStream(s *session) *resumable {
	if b.events == nil {
		return nil
	}
	return newStream(b, sessionmap.StreamRecord{ID: randomID(), Scope: s.scope(), Method: listenStream}, false, nil)
}

// resumeListen serves a resumed standalone GET stream: the missed events,
// then the live stream as before, under the same stream id.
func (b *Bridge) resumeListen(w http.ResponseWriter, r *http.Request, s *session, rec sessionmap.StreamRecord, evs []sessionmap.StreamEvent) {
	if err := b.materialize(r, s); err != nil {
		b.log.Warn("face: cannot give a session its go-sdk half", "err", err)
		http.Error(w, "Internal Server Error: cannot resume the session", http.StatusInternalServerError)
		return
	}
	b.log.Info("face: a client resumed its listening stream", "replayed", len(evs))
	sw := newStreamWriter(w)
	sw.res = newStream(b, rec, true, nil)
	sw.replay = evs
	if !s.claimGETStream(sw) {
		b.serveSecondListen(w, r, s, sw)
		return
	}
	r.Header.Del("Last-Event-ID") // go-sdk serves it as the session's standalone stream
	b.sdk.ServeHTTP(sw, r)
	s.clearGETStream(sw)
	sw.close()
}

// serveSecondListen serves a GET stream of a session whose standalone
// stream is open on this replica already. go-sdk keeps one standalone
// stream per session and answers a second GET with 409 Conflict, but the
// Streamable HTTP transport (2025-11-25) lets a server answer a GET only with
// an event stream or 405, and lets a client hold several streams at once,
// each server message going out on only one of them. A client comes here
// legitimately: the TypeScript SDK reconnects a resumed stream that broke
// before its first event id without Last-Event-ID (it keeps only the ids
// of the stream it reads), while its own standalone stream is still open
// here; a 409 made it give up after its retries. This stream carries its
// own record (primed with an id, resumable like any listen stream) and
// keep-alives; server messages keep going out on the first stream, so none
// is sent twice. It ends with the client, the session or the bridge.
func (b *Bridge) serveSecondListen(w http.ResponseWriter, r *http.Request, s *session, sw *streamWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Connection", "keep-alive")
	sw.markReady()
	sw.WriteHeader(http.StatusOK) // primes the stream, or replays a resumed one's events
	if sw.res == nil {
		_, _ = sw.Write([]byte(": ok\n\n"))
	}
	sw.Flush()
	b.log.Info("face: a client opened a second listening stream on its session; server messages stay on the first")
	b.alive.add(sw)
	select {
	case <-r.Context().Done():
	case <-s.done():
	case <-b.drain.Done():
	}
	b.alive.remove(sw)
	sw.close()
}
