package router

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/ops/metrics"
	"github.com/tasksbridge/tasksbridge/ops/oplog"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// The bridge's upstream traffic is metered where it leaves the process: an
// http.RoundTripper under every HTTP upstream client (both faces' and the
// passthrough proxy's), and an mcp.Connection wrapper for stdio upstreams.
// So tasksbridge_upstream_requests_total, _request_duration_seconds and
// _polls_total count every JSON-RPC request that went upstream, whoever
// sent it (a face, a watcher, a readiness probe, a passthrough client).
//
// The HTTP meter also feeds the era cache (docs/ARCHITECTURE.md, Era
// detection; M-08): an
// upstream that stops behaving like the era it was probed as — a transport
// failure, a modern request refused with 400/404/405 and no JSON-RPC body
// (a legacy server), a legacy initialize refused with a modern error — makes
// the next request probe again.

type ctxKey int

const (
	// ctxPassthrough marks a request forwarded for a same-era client: it is
	// an upstream request but not a watcher poll. Its value is the
	// request's *passCall, so the meter need not decode the body again.
	ctxPassthrough ctxKey = iota
	// ctxNoEraFeedback marks requests whose failure says nothing about the
	// era (the era probe itself, readiness checks).
	ctxNoEraFeedback
)

// peekedCall is what the meter needs of an upstream request.
type peekedCall struct {
	method string
	id     string
	call   bool // a request with an id (not a notification or a response)
}

// passCall is what the passthrough tells the upstream meter: the request
// (decoded once by the router) and the client exchange whose answer is the
// upstream's answer.
type passCall struct {
	pc peekedCall
	ex *exchange // nil: not metered client-side (a batch)
}

// transportError is the code bucket of an upstream exchange without a
// JSON-RPC answer (unreachable, 5xx, a non-JSON-RPC refusal, a broken stream).
type transportError struct{}

func (transportError) Error() string   { return "upstream transport failure" }
func (transportError) Temporary() bool { return true }

// upstreamMeter counts upstream requests. It is shared by the HTTP meter and
// the stdio connection wrapper.
type upstreamMeter struct {
	m *metrics.Metrics
	// invalidate drops the cached upstream era (nil: pinned).
	invalidate func()
	// health logs the upstream's reachability changes.
	health *oplog.UpstreamHealth
}

func (u *upstreamMeter) record(method string, passthrough bool, err error, d time.Duration) {
	u.m.UpstreamRequest(method, err, d)
	u.health.Observe(method, err)
	// tasksbridge_upstream_up, by the rule UpstreamHealth logs by: a
	// transport failure, timeout or TLS failure is down; any answer (a
	// credentials refusal too) is up; a cancelled request says nothing.
	switch metrics.CodeBucket(err) {
	case metrics.CodeCancelled:
	case metrics.CodeTransport, metrics.CodeTimeout, metrics.CodeTLS:
		u.m.UpstreamUp(false)
	default:
		u.m.UpstreamUp(true)
	}
	if method == modern.MethodTasksGet && !passthrough {
		u.m.UpstreamPoll()
	}
}

func (u *upstreamMeter) eraFailed() {
	if u.invalidate != nil {
		u.invalidate()
	}
}

// meterTransport is the HTTP half: an http.RoundTripper around next.
type meterTransport struct {
	next http.RoundTripper
	u    *upstreamMeter
}

func (t *meterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost {
		return t.next.RoundTrip(req)
	}
	ctx := req.Context()
	var pc peekedCall
	pass, passthrough := ctx.Value(ctxPassthrough).(*passCall)
	if passthrough {
		pc = pass.pc
	} else {
		var err error
		if pc, err = peekRequest(req); err != nil {
			return nil, err
		}
	}
	if !pc.call {
		return t.next.RoundTrip(req)
	}
	c := &upstreamCall{
		u: t.u, pc: pc, passthrough: passthrough, ctx: ctx, start: time.Now(),
		feedback:  ctx.Value(ctxNoEraFeedback) == nil,
		modernReq: req.Header.Get(modern.HeaderProtocolVersion) >= modern.ProtocolVersion,
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		if ctx.Err() != nil {
			c.done(ctx.Err())
		} else {
			c.done(transportFailure(err))
			if c.feedback {
				t.u.eraFailed()
			}
		}
		return nil, err
	}
	c.status = resp.StatusCode
	if ae := oauthmeta.FromResponse(resp, pc.method); ae != nil {
		// A refusal of the request's credentials: the upstream answered
		// (counted as unauthorized/forbidden, never as transport), and it
		// says nothing about its era.
		c.done(ae)
	}
	if passthrough && pass.ex != nil {
		// The client's exchange reads the same bytes as they are written
		// on: its answer settles this call (exchange.observe), so the body
		// is not parsed here a second time.
		c.deferred = true
		pass.ex.attach(c)
	} else {
		c.p = newMsgParser(resp.Header.Get("Content-Type"), c.message)
	}
	resp.Body = &meterBody{rc: resp.Body, c: c}
	return resp, nil
}

// A request body over peekHeadMin bytes is peeked at by its first peekHead
// bytes (peekHeadCall) instead of a whole copy and scan.
const (
	peekHeadMin = 64 << 10
	peekHead    = 4 << 10
)

// peekHeadCall reads the method and id of a request from the head of its
// body: the top-level members that lie whole inside head, up to the first
// that does not. It answers only when both id and method are among them, as
// decodeWire would read them (their JSON types included). The bodies peeked
// are the faces' own encodings of checked requests (the passthrough tells
// the meter its call instead), valid JSON whose members appear once, so
// what follows the head cannot change the answer.
func peekHeadCall(head []byte) (peekedCall, bool) {
	var id, method []byte
	end := 0
	for k, v := range rawjson.All(head) {
		// v's end, as an offset in head: a value that reaches the end of
		// head may be cut short.
		if end = cap(head) - cap(v[len(v):]); end >= len(head) || len(k) < 2 || k[len(k)-1] != '"' {
			break
		}
		switch string(rawjson.KeyBytes(k)) {
		case "id":
			id = v
		case "method":
			method = v
		}
		if id != nil && method != nil {
			break
		}
	}
	if id == nil || method == nil {
		return peekedCall{}, false
	}
	small := make([]byte, 0, len(id)+len(method)+20)
	small = append(append(append(append(append(small, `{"id":`...), id...), `,"method":`...), method...), '}')
	var msg wireMsg
	if !decodeWire(small, &msg) || msg.Method == "" || !msg.hasID() {
		return peekedCall{}, true
	}
	return peekedCall{method: msg.Method, id: idKey(msg.ID), call: true}, true
}

// peekRequest reads the method and id of a request body without consuming it.
func peekRequest(req *http.Request) (peekedCall, error) {
	var body []byte
	switch {
	case req.Body == nil || req.Body == http.NoBody:
		return peekedCall{}, nil
	case req.GetBody != nil:
		rc, err := req.GetBody()
		if err != nil {
			return peekedCall{}, nil
		}
		// A pooled copy: only the method and id (new strings) outlive it.
		buf := mcpio.GetBuffer()
		defer mcpio.PutBuffer(buf)
		if n := req.ContentLength; n > peekHeadMin {
			// A large request (a 1 MB call): its head is enough, since
			// the faces' encoders write id and method before params.
			buf.Grow(peekHead)
			head := buf.AvailableBuffer()[:peekHead]
			if _, err := io.ReadFull(rc, head); err == nil {
				if pc, ok := peekHeadCall(head); ok {
					rc.Close()
					return pc, nil
				}
			}
			rc.Close()
			if rc, err = req.GetBody(); err != nil {
				return peekedCall{}, nil
			}
		}
		if n := req.ContentLength; n > 0 && n <= maxSniff {
			// Sized once: ReadFrom's doubling cost ~4× a large body
			// (the hostile-input bound, TestHostileInputs).
			buf.Grow(int(n))
			b := buf.AvailableBuffer()[:n]
			if _, err := io.ReadFull(rc, b); err == nil {
				buf.Write(b)
			}
		} else {
			_, _ = buf.ReadFrom(io.LimitReader(rc, maxSniff))
		}
		rc.Close()
		body = buf.Bytes()
	default:
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return peekedCall{}, err
		}
		body = b
		req.Body = io.NopCloser(bytes.NewReader(b))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	}
	var msg wireMsg
	if !decodeWire(body, &msg) || msg.Method == "" || !msg.hasID() {
		return peekedCall{}, nil
	}
	return peekedCall{method: msg.Method, id: idKey(msg.ID), call: true}, nil
}

// upstreamCall is one metered upstream request.
type upstreamCall struct {
	u           *upstreamMeter
	pc          peekedCall
	passthrough bool
	feedback    bool
	modernReq   bool
	ctx         context.Context
	start       time.Time
	status      int
	// p parses the answer, unless deferred: the client exchange settles
	// the call (passthrough: exchange.attach).
	p        *msgParser
	deferred bool

	once sync.Once

	// A call the exchange settles remembers how the body ended: the
	// exchange sees the body's last bytes only after they were read.
	// ended is set once readErr and ctxErr are.
	ended   atomic.Bool
	readErr error
	ctxErr  error
}

func (c *upstreamCall) done(err error) {
	c.once.Do(func() { c.u.record(c.pc.method, c.passthrough, err, time.Since(c.start)) })
}

// message handles one JSON-RPC message of the response.
func (c *upstreamCall) message(b []byte) {
	var msg wireMsg
	if !decodeWire(b, &msg) || msg.Method != "" || idKey(msg.ID) != c.pc.id {
		return
	}
	c.answer(&msg)
}

// answer settles the call with its JSON-RPC answer.
func (c *upstreamCall) answer(msg *wireMsg) {
	if !msg.hasError {
		c.done(nil)
		return
	}
	c.done(&rpc.Error{Code: msg.ErrorCode})
	if c.feedback && c.pc.method == legacy.MethodInitialize && isModernCode(msg.ErrorCode) {
		c.u.eraFailed() // a modern server refusing the handshake
	}
}

func isModernCode(code int64) bool {
	switch code {
	case rpc.CodeUnsupportedProtocolVersion, rpc.CodeHeaderMismatch, rpc.CodeMissingRequiredClientCapability:
		return true
	}
	return false
}

// end settles a response that carried no answer for the request. readErr
// is how the body ended (nil: EOF), ctxErr the request context's error then.
func (c *upstreamCall) end(readErr, ctxErr error) {
	answered := true
	c.once.Do(func() { answered = false })
	if answered {
		return
	}
	var err error
	switch {
	case ctxErr != nil:
		err = ctxErr
	default:
		err = transportError{}
	}
	c.u.record(c.pc.method, c.passthrough, err, time.Since(c.start))
	if !c.feedback || ctxErr != nil {
		return
	}
	switch {
	case c.modernReq && (c.status == http.StatusBadRequest || c.status == http.StatusNotFound || c.status == http.StatusMethodNotAllowed):
		// §3.4: a modern request refused without a recognisable modern
		// JSON-RPC body is a legacy server.
		c.u.eraFailed()
	case readErr != nil && !errors.Is(readErr, io.EOF):
		c.u.eraFailed()
	}
}

// bodyEnded handles the end of the body of a call the exchange settles.
// When the read that ended the body returned no data, the exchange has
// seen every byte (the proxy writes each read before the next): a call
// still unanswered has no answer, and is settled now, before the client can
// have read the end of the response. Otherwise the exchange settles it once
// it has seen those last bytes (afterWrite).
func (c *upstreamCall) bodyEnded(readErr error, withData bool) {
	c.readErr, c.ctxErr = readErr, c.ctx.Err()
	c.ended.Store(true)
	if !withData {
		c.end(readErr, c.ctxErr)
	}
}

// settleEnded settles an unanswered call whose body has ended, after the
// exchange has seen the body's last bytes; final additionally settles a
// call whose body never ended (the exchange is over).
func (c *upstreamCall) settleEnded(final bool) {
	switch {
	case c.ended.Load():
		c.end(c.readErr, c.ctxErr)
	case final:
		c.end(io.ErrUnexpectedEOF, c.ctx.Err())
	}
}

// meterBody feeds a response body to the call's parser as it is read.
type meterBody struct {
	rc io.ReadCloser
	c  *upstreamCall

	mu    sync.Mutex
	ended bool
}

func (b *meterBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.mu.Lock()
	if !b.ended {
		if b.c.p != nil {
			b.c.p.feed(p[:n])
		}
		if err != nil {
			b.endLocked(err, n > 0)
		}
	}
	b.mu.Unlock()
	return n, err
}

func (b *meterBody) Close() error {
	err := b.rc.Close()
	b.mu.Lock()
	if !b.ended {
		b.endLocked(io.ErrUnexpectedEOF, false)
	}
	b.mu.Unlock()
	return err
}

func (b *meterBody) endLocked(err error, withData bool) {
	b.ended = true
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if b.c.deferred {
		b.c.bodyEnded(err, withData)
		return
	}
	b.c.p.close()
	b.c.p.release()
	b.c.p = nil
	b.c.end(err, b.c.ctx.Err())
}

// meterConnTransport wraps a stdio upstream's mcp.Transport.
type meterConnTransport struct {
	t mcp.Transport
	u *upstreamMeter
}

func (t meterConnTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return newMeterConn(c, t.u), nil
}

// meterConn is the stdio half: it pairs each request written with the
// response read for its id.
type meterConn struct {
	mcp.Connection
	u *upstreamMeter

	mu      sync.Mutex
	pending map[string]pendingCall
}

type pendingCall struct {
	method string
	start  time.Time
}

func newMeterConn(c mcp.Connection, u *upstreamMeter) *meterConn {
	return &meterConn{Connection: c, u: u, pending: map[string]pendingCall{}}
}

// rawIDKey is an id as a map key (ids of one connection compare by type
// and value).
func rawIDKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

func (c *meterConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return c.Connection.Write(ctx, msg)
	}
	key := rawIDKey(req.ID)
	c.mu.Lock()
	c.pending[key] = pendingCall{method: req.Method, start: time.Now()}
	c.mu.Unlock()
	err := c.Connection.Write(ctx, msg)
	if err != nil {
		c.settle(key, transportError{})
	}
	return err
}

func (c *meterConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		if ctx.Err() == nil {
			c.settleAll(transportError{})
		}
		return msg, err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		var rerr error
		var we *jsonrpc.Error
		if resp.Error != nil {
			rerr = transportError{}
			if errors.As(resp.Error, &we) {
				rerr = &rpc.Error{Code: we.Code}
			}
		}
		c.settle(rawIDKey(resp.ID), rerr)
	}
	return msg, nil
}

func (c *meterConn) Close() error {
	err := c.Connection.Close()
	c.settleAll(context.Canceled)
	return err
}

func (c *meterConn) settle(key string, err error) {
	c.mu.Lock()
	p, ok := c.pending[key]
	delete(c.pending, key)
	c.mu.Unlock()
	if ok {
		c.u.record(p.method, false, err, time.Since(p.start))
	}
}

func (c *meterConn) settleAll(err error) {
	c.mu.Lock()
	all := c.pending
	c.pending = map[string]pendingCall{}
	c.mu.Unlock()
	for _, p := range all {
		c.u.record(p.method, false, err, time.Since(p.start))
	}
}
