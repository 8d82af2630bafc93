package legacyface

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/internal/version"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/translate"
)

// The lean path serves the hot legacy methods over HTTP without go-sdk's
// server: the router already read the body once; here it is decoded once
// (mcpio.DecodeMessage), the session is a small in-memory record backed
// by the store (sessions.go), the handler is the same one the go-sdk path
// calls, and the answer is written straight onto the response, as
// application/json, or as an event stream once something must go out
// before the answer (a notification, a server→client request, a prime or
// a keep-alive). go-sdk stays where it is the part that serves: the
// standalone GET stream, subscriptions, the other standard methods, batches
// and stdio; a session gets its go-sdk half only when such a request comes
// (materialize).

// leanMethods are the requests the lean path answers.
var leanMethods = map[string]bool{
	legacy.MethodPing:        true,
	legacy.MethodToolsCall:   true,
	legacy.MethodToolsList:   true,
	legacy.MethodTasksGet:    true,
	legacy.MethodTasksList:   true,
	legacy.MethodTasksCancel: true,
	legacy.MethodTasksResult: true,
}

// Encoded answers and events use the buffers every request path shares.
var getBuf, putBuf = mcpio.GetBuffer, mcpio.PutBuffer

// leanOut is the response of one lean request.
type leanOut struct {
	w  http.ResponseWriter
	rc *http.ResponseController

	mu   sync.Mutex
	sse  bool // committed as an event stream
	done bool // the answer went out; nothing more may be written

	res *resumable // the stream's stored events (resume.go); nil: not resumable

	// park is set on a request whose wait may take its connection over
	// (parked.go); nil: the wait always blocks its request's goroutine.
	park *parkCtl
	gone bool // a write to the taken-over connection failed: the client is gone
	// slot is the stream's keep-alive phase (streams; guarded by its lock).
	slot uint8
}

func (o *leanOut) phaseSlot() *uint8 { return &o.slot }

func newLeanOut(w http.ResponseWriter) *leanOut {
	return &leanOut{w: w, rc: http.NewResponseController(w)}
}

func (o *leanOut) commitLocked() {
	if o.sse {
		return
	}
	h := o.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	if o.park != nil {
		// The wait may take the connection over (parked.go) and then ends
		// the response by closing it: the client must not expect to reuse
		// the connection.
		h.Set("Connection", "close")
	}
	o.w.WriteHeader(http.StatusOK)
	o.sse = true
	if o.res != nil {
		o.res.prime(o.w, o.rc)
	}
}

var errStreamDone = errors.New("the request is over")

// prime commits the response as an event stream and sends a first comment
// at once, so a client (and every proxy between) sees a live stream from
// the start of a long wait instead of silence until the first keep-alive
// (L-63).
func (o *leanOut) prime() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done || o.sse {
		return
	}
	o.commitLocked() // a resumable stream sent its priming event here
	if _, err := o.w.Write([]byte(": stream open\n\n")); err == nil {
		_ = o.rc.Flush()
	}
}

// event writes one JSON-RPC message as an SSE event.
func (o *leanOut) event(msg []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return errStreamDone
	}
	return o.eventLocked(msg)
}

func (o *leanOut) eventLocked(msg []byte) error {
	o.commitLocked()
	// A resumable stream stores the event before its id reaches the
	// client, so any replica can replay it.
	return writeEventID(o.w, o.rc, o.res.store(msg), msg)
}

// writeEventID writes one JSON-RPC message as an SSE "message" event with
// the given id ("": none) and flushes it.
func writeEventID(w io.Writer, rc *http.ResponseController, id string, msg []byte) error {
	b := getBuf()
	defer putBuf(b)
	if id != "" {
		b.WriteString("id: ")
		b.WriteString(id)
		b.WriteByte('\n')
	}
	b.WriteString("event: message\ndata: ")
	b.Write(msg)
	b.WriteString("\n\n")
	if _, err := w.Write(b.Bytes()); err != nil {
		return err
	}
	return rc.Flush()
}

// notify writes a notification on the stream.
func (o *leanOut) notify(method string, params json.RawMessage) error {
	b := getBuf()
	defer putBuf(b)
	b.WriteString(`{"jsonrpc":"2.0","method":`)
	writeJSONString(b, method)
	if len(params) > 0 {
		b.WriteString(`,"params":`)
		b.Write(params)
	}
	b.WriteByte('}')
	return o.event(b.Bytes())
}

// answer writes the final message: an event on a stream, otherwise a plain
// application/json body.
func (o *leanOut) answer(msg []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return
	}
	o.done = true
	if o.sse {
		err := o.eventLocked(msg)
		o.res.delivered(err == nil) // a resumed stream's owed answer is settled or stays owed (resumeowed.go)
		return
	}
	mcpio.WriteJSON(o.w, http.StatusOK, msg)
}

// refuse writes a limit refusal (rpc.LimitHTTP): with its HTTP status and
// Retry-After when nothing went out yet, else as the stream's last event.
func (o *leanOut) refuse(msg []byte, status, retryAfter int) {
	o.mu.Lock()
	if o.done || o.sse {
		o.mu.Unlock()
		o.answer(msg)
		return
	}
	o.done = true
	o.w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	mcpio.WriteJSON(o.w, status, msg)
	o.mu.Unlock()
}

// end closes the request without an answer (it was cancelled: the receiver
// does not answer a cancelled request).
func (o *leanOut) end() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return
	}
	o.done = true
	o.res.delivered(false)
	if !o.sse {
		o.res = nil // nothing to resume: the request is over unanswered
		o.commitLocked()
	}
}

// keepAlive writes an SSE comment on a committed stream. The shared ticker
// calls it; a stream busy writing (or a slow client holding the lock) is
// skipped this round rather than stalling every other stream.
//
// On a taken-over connection (parked.go) nothing reads the connection any
// more: the client's close (peerClosed) or a failed write is the only sign
// that it went away, so either ends the wait as a disconnect would.
func (o *leanOut) keepAlive() {
	if !o.mu.TryLock() {
		return
	}
	if o.done || !o.sse {
		o.mu.Unlock()
		return
	}
	var err error
	if tc, ok := o.w.(*takenConn); ok && peerClosed(tc.conn) {
		err = errTakenConnFailed
		tc.failed = true
	} else {
		_ = o.rc.SetWriteDeadline(time.Now().Add(keepAliveWriteTimeout))
		if _, err = o.w.Write([]byte(": keep-alive\n\n")); err == nil {
			err = o.rc.Flush()
		}
	}
	_ = o.rc.SetWriteDeadline(time.Time{})
	gone := err != nil && o.markGoneLocked()
	pc := o.park
	o.mu.Unlock()
	if gone {
		pc.clientGone()
	}
}

// keepAliveWriteTimeout bounds one keep-alive write to a client that stopped
// reading.
const keepAliveWriteTimeout = 5 * time.Second

func writeJSONString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s)
	b.Write(enc)
}

// envelope encodes the JSON-RPC response to id: the result, or the error
// (as go-sdk would encode it).
func envelope(b *bytes.Buffer, id jsonrpc.ID, result json.RawMessage, err error) {
	var eb json.RawMessage
	if err != nil {
		var e *jsonrpc.Error
		if !errors.As(wireError(err), &e) {
			e = rpc.Errorf(rpc.CodeInternalError, "internal error")
		}
		var merr error
		if eb, merr = json.Marshal(e); merr != nil {
			eb = []byte(`{"code":-32603,"message":"internal error"}`)
		}
	}
	mcpio.AppendResponse(b, id, result, eb)
}

// callKey names a server→client request of a session by its JSON-RPC id
// (for the client's answer).
func callKey(sid string, id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return sid + "\x00" + string(b)
}

// callID names a lean request among its session's (callKey without the
// session).
func callID(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

// addCall registers a lean request in flight under its id (a later one with
// the same id replaces it, as the process-wide map did).
func (s *session) addCall(id string, lc *leanCall) {
	s.callMu.Lock()
	if s.calls == nil {
		s.calls = map[string]*leanCall{}
	}
	s.calls[id] = lc
	s.callMu.Unlock()
}

// dropCall forgets the request lc, unless another took its id since.
func (s *session) dropCall(id string, lc *leanCall) {
	s.callMu.Lock()
	if s.calls[id] == lc {
		delete(s.calls, id)
		if len(s.calls) == 0 {
			s.calls = nil // an idle session keeps no map
		}
	}
	s.callMu.Unlock()
}

// call returns the lean request in flight under id (nil: none).
func (s *session) call(id string) *leanCall {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	return s.calls[id]
}

// leanCall is one in-flight lean request that notifications/cancelled can
// end.
type leanCall struct {
	cancel    func()
	cancelled bool
	mu        sync.Mutex
}

// serveLean answers one request (or notification) of s on the lean path.
// It reports whether the request's wait took the connection over (parked.go):
// then the wait calls release when it ends, else the caller does.
func (b *Bridge) serveLean(w http.ResponseWriter, r *http.Request, s *session, req *jsonrpc.Request, release func()) (parked bool) {
	if !req.IsCall() {
		b.leanNotification(s, req)
		w.WriteHeader(http.StatusAccepted)
		return false
	}
	long := req.Method == legacy.MethodToolsCall || req.Method == legacy.MethodTasksResult
	if long {
		// A long request's params outlive its handler (a parked or resumed
		// wait, the resumable stream's record): they get a copy of their
		// own, as the original shares the buffer the whole message was
		// read into, often many times their size.
		req.Params = bytes.Clone(req.Params)
	}
	ri := httpReqInfo(r, s, req.Method, req.Params)
	out := newLeanOut(w)
	if long {
		out.res = b.newResumable(s, req)
		out.park = b.newParkCtl(w, r, s, release)
	}
	return b.runLean(r, s, ri, out, req.ID, func(ctx context.Context) (*rawResult, error) {
		return s.leanDispatch(ctx, ri, req.Method)
	})
}

// errCallCancelled is the cause of a lean request's end by
// notifications/cancelled, as opposed to the client going away (which a
// resumable stream survives).
var errCallCancelled = errors.New("the client cancelled the request")

// leanRun is one lean request from its start to its answer: what runLean
// set up and its tail (finish) tears down. A parked wait (parked.go) runs
// the tail after the request's handler has returned.
type leanRun struct {
	b      *Bridge
	s      *session
	ri     *reqInfo
	out    *leanOut
	id     jsonrpc.ID
	lc     *leanCall
	key    string
	cancel context.CancelCauseFunc
	long   bool // counted in inflight and written to by the keep-alive ticker
	start  time.Time
	r      *http.Request // the client's request (its public URL for a relayed refusal)
	// clientGone reports whether the client went away: the request's
	// context, until a parked wait takes the connection over.
	clientGone func() bool
}

// runLean runs one lean request's handler (run) and writes its answer with
// the JSON-RPC id id on out: a fresh request, or one resumed on a new
// stream (resume.go). It reports whether the wait parked (parked.go): the
// parked wait then writes the answer and finishes the request later.
func (b *Bridge) runLean(r *http.Request, s *session, ri *reqInfo, out *leanOut, id jsonrpc.ID, run func(context.Context) (*rawResult, error)) (parked bool) {
	ri.out, ri.id = out, id

	ctx, cancel := context.WithCancelCause(r.Context())
	rctx := r.Context()
	lr := &leanRun{b: b, s: s, ri: ri, out: out, id: id, cancel: cancel, key: callID(id), r: r,
		clientGone: func() bool { return rctx.Err() != nil }}
	lr.lc = &leanCall{cancel: func() { cancel(errCallCancelled) }}
	if pc := out.park; pc != nil {
		pc.begin(lr)
		// notifications/cancelled reaches the wait wherever it runs: this
		// goroutine, a parked wait, or a resumed one.
		lr.lc.cancel = func() { pc.stop(errCallCancelled) }
	}
	s.addCall(lr.key, lr.lc)
	ctx = withReqInfo(ctx, ri)

	if ri.method == legacy.MethodToolsCall || ri.method == legacy.MethodTasksResult {
		lr.long = true
		b.inflight.add()
		b.alive.add(out)
	}

	lr.start = time.Now()
	res, err := run(ctx)
	if errors.Is(err, errParked) {
		return true
	}
	lr.finish(res, err)
	return false
}

// finish reports the request to the hooks, writes its answer (or ends its
// stream unanswered) and tears down what runLean set up.
func (lr *leanRun) finish(res *rawResult, err error) {
	b, out := lr.b, lr.out
	defer func() {
		if lr.long {
			b.alive.remove(out)
			b.inflight.done()
		}
		lr.s.dropCall(lr.key, lr.lc)
		lr.cancel(nil)
		lr.ri.finish()
	}()
	lr.lc.mu.Lock()
	cancelled := lr.lc.cancelled
	lr.lc.mu.Unlock()
	gone := !cancelled && err != nil && lr.clientGone()
	if gone {
		out.oweCut(lr.s) // before the hook, so what observes the request's end finds it owed
	}
	if h := b.cfg.Hooks.Request; h != nil {
		ev := RequestEvent{Method: lr.ri.method, Era: "legacy", Outcome: OutcomeOK, Duration: time.Since(lr.start)}
		if err != nil {
			ev.Outcome, ev.Code = outcomeOf(err)
		}
		h(ev)
	}
	if cancelled || gone {
		out.end()
		return
	}
	if err != nil && b.drain.Err() != nil && b.eventsOutlive && out.resumableOpen() {
		// Shutting down: the stream ends unanswered and the client resumes
		// it with Last-Event-ID on another replica (resume.go), so a rolling
		// restart drops no wait. Events kept in this process's memory die
		// with it: those clients get the "call again" error instead.
		out.end()
		return
	}
	if err != nil && out.relayAuth(lr.r, lr.id, err) {
		return
	}
	buf := getBuf()
	defer putBuf(buf)
	var raw json.RawMessage
	if err == nil {
		raw = res.JSON
	}
	envelope(buf, lr.id, raw, err)
	if status, retry, ok := rpc.LimitHTTP(err); ok {
		out.refuse(buf.Bytes(), status, retry)
		return
	}
	out.answer(buf.Bytes())
}

// leanDispatch runs the handler of one lean method.
func (s *session) leanDispatch(ctx context.Context, ri *reqInfo, method string) (*rawResult, error) {
	var (
		res mcp.Result
		err error
	)
	switch method {
	case legacy.MethodPing:
		return &rawResult{JSON: json.RawMessage("{}")}, nil
	case legacy.MethodToolsCall:
		res, err = s.toolsCall(ctx, ri)
	case legacy.MethodToolsList:
		res, err = s.toolsList(ctx, ri)
	default:
		return s.tasksCall(ctx, ri, method, ri.raw)
	}
	return asRaw(res, err)
}

// leanNotification handles a client notification of a session without a
// go-sdk half: notifications/cancelled ends the named lean request; the
// rest (initialized, roots list changed, progress) need nothing here.
func (b *Bridge) leanNotification(s *session, req *jsonrpc.Request) {
	if req.Method != "notifications/cancelled" {
		return
	}
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &p) != nil || p.RequestID == nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	if lc := s.call(callID(id)); lc != nil {
		lc.mu.Lock()
		lc.cancelled = true
		cancel := lc.cancel
		lc.mu.Unlock()
		cancel()
	}
}

// leanFor reports whether the lean path serves req: the lean methods, and
// every notification of a session without a go-sdk half (with one, go-sdk
// sees those that may concern it, e.g. a cancel of a request it serves).
func (b *Bridge) leanFor(s *session, req *jsonrpc.Request) bool {
	if !req.IsCall() {
		if s.serverSession() == nil {
			return true
		}
		if req.Method != "notifications/cancelled" {
			return req.Method == "notifications/initialized"
		}
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) != nil {
			return false
		}
		id, err := jsonrpc.MakeID(p.RequestID)
		if err != nil {
			return false
		}
		return s.call(callID(id)) != nil
	}
	return leanMethods[req.Method]
}

// askLean sends one server→client request on the lean request's stream and
// waits for the client's answer, which arrives as a POST of its own
// (deliverAnswer). The request id is the side request's own random id
// (never reused in a session, L-84).
func (s *session) askLean(ctx context.Context, ri *reqInfo, side translate.SideRequest) ([]byte, error) {
	if side.Request.Method == legacy.MethodElicitationCreate || side.Request.Method == legacy.MethodSamplingCreateMessage || side.Request.Method == legacy.MethodRootsList {
		// the client declared the capability (translate checked it)
	} else {
		return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: cannot send %s to a client", side.Request.Method)
	}
	id, err := sideID(side)
	if err != nil {
		return nil, err
	}
	params := side.Request.Params
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	msg, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}{"2.0", side.Request.ID, side.Request.Method, params})
	if err != nil {
		return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: encode %s: %v", side.Request.Method, err)
	}
	key := callKey(s.id, id)
	ch := make(chan []byte, 1)
	s.b.pending.Store(key, ch)
	defer s.b.pending.Delete(key)
	if err := ri.out.event(msg); err != nil {
		return nil, context.Canceled // nobody can answer: ask again later
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// deliverAnswer hands a client's JSON-RPC response to the lean request that
// asked; false when no lean request waits for it.
func (b *Bridge) deliverAnswer(s *session, resp *jsonrpc.Response, body []byte) bool {
	v, ok := b.pending.LoadAndDelete(callKey(s.id, resp.ID))
	if !ok {
		return false
	}
	v.(chan []byte) <- append([]byte(nil), bytes.TrimSpace(body)...)
	return true
}

// logLevels orders the MCP log levels (RFC 5424 severities).
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// logEnabled reports whether a message of level msg goes to a session whose
// client set level session. Nothing goes out before the client sets a
// level (go-sdk's reading of the spec, kept for the same clients).
func logEnabled(session, msg string) bool {
	si, mi := slices.Index(logLevels, session), slices.Index(logLevels, msg)
	return si >= 0 && mi >= si
}

// leanInitialize answers initialize without a go-sdk server: the version is
// negotiated as go-sdk does (the client's when the face speaks it, else the
// newest legacy one), the answer comes from the upstream's
// server/discover, and the session is durable before the reply (L-01..L-04).
func (b *Bridge) leanInitialize(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if len(req.Params) == 0 || string(req.Params) == "null" || json.Unmarshal(req.Params, &p) != nil {
		writeRPCError(w, http.StatusOK, req, rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: initialize needs params (an object with protocolVersion, capabilities and clientInfo)"))
		return
	}
	version := legacy.ProtocolVersion
	if slices.Contains(legacyVersions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	s := b.newSession(randomID(), principalOf(r), transportHTTP)
	// A copy: req.Params points into the whole request body.
	s.initParams = append(json.RawMessage(nil), req.Params...)
	s.protocolVersion = version
	if err := b.admit(r, s); err != nil {
		status, retry, _ := rpc.LimitHTTP(err)
		w.Header().Set("Retry-After", strconv.Itoa(retry))
		writeRPCError(w, status, req, err)
		return
	}
	ri := httpReqInfo(r, s, req.Method, req.Params)
	defer ri.finish()
	start := time.Now()
	out, err := s.initializeResult(r.Context(), ri, version)
	if h := b.cfg.Hooks.Request; h != nil {
		ev := RequestEvent{Method: req.Method, Era: "legacy", Outcome: OutcomeOK, Duration: time.Since(start)}
		if err != nil {
			ev.Outcome, ev.Code = outcomeOf(err)
		}
		h(ev)
	}
	if err != nil {
		b.dropSession(s, false)
		if edge.RelayAuthError(w, r, err, req.ID) {
			return // the upstream's 401/403, so the client's OAuth flow starts
		}
		buf := getBuf()
		defer putBuf(buf)
		envelope(buf, req.ID, nil, err)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(buf.Bytes())
		return
	}
	// An idle session keeps only its record fields; the per-request _meta
	// is rebuilt (and cached) when the session is used.
	s.mu.Lock()
	s.meta = nil
	s.mu.Unlock()
	b.sessionStarted(s)
	buf := getBuf()
	defer putBuf(buf)
	envelope(buf, req.ID, out, nil)
	w.Header().Set(hdrSessionID, s.id)
	mcpio.WriteJSON(w, http.StatusOK, buf.Bytes())
}

// initializeResult is the legacy InitializeResult of a new session, built
// from the upstream's server/discover; the session record is stored first.
func (s *session) initializeResult(ctx context.Context, ri *reqInfo, version string) (json.RawMessage, error) {
	disc, err := s.discoverFor(ctx, ri)
	if err != nil {
		return nil, err
	}
	return s.buildInitialize(ctx, ri, disc, version)
}

// discoverFor asks the upstream's server/discover with the session's
// options (cached, see Bridge.discover).
func (s *session) discoverFor(ctx context.Context, ri *reqInfo) (json.RawMessage, error) {
	opts, _, err := s.callOptions(ri)
	if err != nil {
		return nil, err
	}
	disc, err := s.b.discover(ctx, opts, s.principal)
	if err != nil {
		return nil, s.b.upstreamError(legacy.MethodInitialize, false, err)
	}
	return disc, nil
}

// buildInitialize translates a server/discover result into the legacy
// InitializeResult of version and stores the session before it is returned.
func (s *session) buildInitialize(ctx context.Context, ri *reqInfo, disc json.RawMessage, protocolVersion string) (json.RawMessage, error) {
	out, err := translate.InitializeResultFromDiscover(disc, translate.InitializeOptions{
		// tasks/list is scoped to the principal, or to the session when the
		// client sent no credentials (documented; L-04).
		ListTasks:  true,
		ServerInfo: &modern.Implementation{Name: "tasksbridge", Version: version.Version},
	})
	if err != nil {
		return nil, err
	}
	if protocolVersion != legacy.ProtocolVersion {
		// Legacy tasks exist only under 2025-11-25: an older session gets
		// the upstream's capabilities without them.
		if out, err = legacy.PatchInitializeResultTasks(out, nil); err != nil {
			return nil, err
		}
		if out, err = setMember(out, "protocolVersion", protocolVersion); err != nil {
			return nil, err
		}
	}
	if err := s.b.storeSession(ctx, s, protocolVersion, ri.raw); err != nil {
		return nil, err
	}
	return out, nil
}
