package modernface

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/translate"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
)

// A legacy upstream asks for input in the middle of a request with real
// server→client requests on that request's stream (an elicitation before a
// task is created, or during a synchronous tool). A 2026-07-28 server cannot
// send requests; it answers input_required with inputRequests and a
// requestState, and the client retries with inputResponses (MRTR, M-48). The
// bridge keeps the upstream call open in this process between the rounds;
// requestState names it, HMAC-protected and bound to the principal, the
// method and the tool (M-48: requestState is attacker input). A retry whose
// state is unknown (expired, or the bridge restarted) starts the call afresh,
// so the upstream simply asks again (M-48: re-ask rather than error).

func randomID() string { return rand.Text() }

func randomKey() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}

// pendingCall is an upstream call that asked for input.
type pendingCall struct {
	f         *Face
	token     string
	principal string
	method    string
	name      string
	sess      *legacyup.Session
	lc        *translate.LegacyCall
	caps      modern.ClientCapabilities
	cancel    context.CancelFunc

	mu          sync.Mutex
	events      chan struct{} // cap 1: outstanding input or completion changed
	outstanding map[string]translate.InputEntry
	order       []string
	done        bool
	result      json.RawMessage
	err         error
	refused     *rpc.Error // an input request the client cannot answer (M-39)
	registered  bool
	attached    *call
	timer       *time.Timer
}

func (pc *pendingCall) signal() {
	select {
	case pc.events <- struct{}{}:
	default:
	}
}

// onRequest turns an upstream server→client request into an input request.
func (pc *pendingCall) onRequest(sr *legacyup.SideRequest) {
	entry, err := translate.InputRequestFromLegacy(sr.Raw, pc.f.opts.IDs)
	if err != nil {
		_ = pc.sess.Respond(pc.f.ctx, sr.ID, nil, rpc.As(err))
		return
	}
	if err := declared(pc.caps, entry.Request); err != nil {
		// The upstream's request is refused, and the client learns what it
		// must declare: -32021 with data.requiredCapabilities (M-39), which
		// go-sdk sends as HTTP 400 — not whatever the upstream makes of the
		// refusal.
		// Record the refusal before answering the upstream: its reply to the
		// tools/call (an error) must find it already set.
		pc.mu.Lock()
		if pc.refused == nil {
			pc.refused = missingCapability(entry.Request)
		}
		pc.mu.Unlock()
		pc.signal()
		_ = pc.sess.Respond(pc.f.ctx, sr.ID, nil, rpc.As(err))
		if sr.RelatedTask != "" {
			// The upstream created a task for the call before it asked
			// (related-task _meta): the client is refused, so nobody will
			// ever learn that task's id. Cancelling the tools/call does not
			// stop a created task (L-85: tasks/cancel does), so it is
			// cancelled at once rather than left to run out its ttl.
			pc.f.cancelOrphan(pc.sess, sr.RelatedTask)
		}
		return
	}
	pc.mu.Lock()
	pc.outstanding[entry.Key] = entry
	pc.order = append(pc.order, entry.Key)
	pc.mu.Unlock()
	pc.signal()
}

// cancelOrphan cancels an upstream task no client will ever know of, in the
// background (bounded by the upstream timeout).
func (f *Face) cancelOrphan(s *legacyup.Session, upstreamTaskID string) {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		if _, err := s.CancelTask(f.ctx, upstreamTaskID); err != nil {
			f.log.Warn("modern face: could not cancel an upstream task created for a refused call; it runs until its ttl ends",
				"upstream", f.pool.Target(), "err", err)
		}
	}()
}

// missingCapability is the -32021 a client gets when the upstream needs input
// of a kind the client did not declare on its request (M-39): every such
// request's capability in data.requiredCapabilities, and what needs it.
func missingCapability(rs ...modern.InputRequest) *rpc.Error {
	var req modern.ClientCapabilities
	var whats []string
	for _, r := range rs {
		switch r.Kind() {
		case modern.InputElicitation:
			mode := "form"
			if r.ElicitationMode() == "url" {
				mode = "url"
			}
			if req.Elicitation == nil {
				req.Elicitation = &modern.Object{}
			}
			(*req.Elicitation)[mode] = json.RawMessage(`{}`)
			whats = append(whats, "this tool's "+mode+"-mode elicitation")
		case modern.InputSampling:
			req.Sampling = &modern.Object{}
			whats = append(whats, "this tool's sampling request")
		case modern.InputRoots:
			req.Roots = &modern.Object{}
			whats = append(whats, "this tool's roots request")
		default:
			whats = append(whats, r.Method)
		}
	}
	return modern.ErrMissingRequiredClientCapability(req, strings.Join(slices.Compact(whats), " and "))
}

// undeclared returns the input requests of reqs (in key order) whose
// capability caps does not declare (M-39, M-48).
func undeclared(caps modern.ClientCapabilities, reqs modern.InputRequests) []modern.InputRequest {
	var out []modern.InputRequest
	for _, k := range sortedKeys(reqs) {
		if declared(caps, reqs[k]) != nil {
			out = append(out, reqs[k])
		}
	}
	return out
}

// declared refuses an input request for a capability the client did not
// declare on its request (M-48, L-82).
func declared(caps modern.ClientCapabilities, r modern.InputRequest) error {
	ok := true
	what := ""
	switch r.Kind() {
	case modern.InputElicitation:
		what = "elicitation"
		if r.ElicitationMode() == "url" {
			ok, what = caps.SupportsElicitationURL(), "url elicitation"
		} else {
			ok = caps.SupportsElicitationForm()
		}
	case modern.InputSampling:
		ok, what = caps.SupportsSampling(), "sampling"
	case modern.InputRoots:
		ok, what = caps.SupportsRoots(), "roots"
	}
	if !ok {
		return rpc.Errorf(rpc.CodeInvalidRequest, "the client did not declare the %s capability on its request; the bridge cannot ask it for %s", what, r.Method)
	}
	return nil
}

func (pc *pendingCall) onNotify(method string, params json.RawMessage) {
	pc.mu.Lock()
	c := pc.attached
	pc.mu.Unlock()
	if c == nil {
		return
	}
	if fn := pc.f.notifyFor(c.ctx, c); fn != nil {
		fn(method, params)
	}
}

// seal renders the requestState naming pc.
func (f *Face) seal(pc *pendingCall) string {
	return pc.token + "." + f.mac(pc.token, pc.principal, pc.method, pc.name)
}

func (f *Face) mac(token, principal, method, name string) string {
	h := hmac.New(sha256.New, f.stateKey())
	h.Write([]byte(strings.Join([]string{token, principal, method, name}, "\x00")))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// resume finds the pending call a retry's requestState names, if it is this
// caller's, for this method and tool, and still open.
func (f *Face) resume(state string, c *call, name string) *pendingCall {
	token, sum, ok := strings.Cut(state, ".")
	if !ok || !hmac.Equal([]byte(sum), []byte(f.mac(token, c.principal, c.method, name))) {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pending[token]
}

// callWithInput runs an MRTR-capable request upstream (tools/call,
// prompts/get, resources/read): the first round starts the upstream call, a
// retry with a known requestState delivers its inputResponses to the call the
// state names.
func (f *Face) callWithInput(ctx context.Context, c *call, s *legacyup.Session, params json.RawMessage, lc *translate.LegacyCall) (json.RawMessage, error) {
	c.ctx = ctx // before any upstream notification can be relayed on it
	name := c.stringParam("name") + c.stringParam("uri")
	if name == "" {
		var named struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		}
		_ = json.Unmarshal(c.params, &named)
		name = named.Name + named.URI
	}
	var ip modern.InputResponseParams
	if c.hasRetryMembers() {
		// Only a retry carries them; the front validated the rest (M-37).
		var err error
		if ip, err = modern.DecodeInputResponseParams(c.params); err != nil {
			return nil, err
		}
	}
	if len(ip.RequestState) > 0 {
		var state string
		if json.Unmarshal(ip.RequestState, &state) == nil {
			if pc := f.resume(state, c, name); pc != nil {
				if err := pc.deliver(ctx, ip.InputResponses); err != nil {
					return nil, err
				}
				return f.await(ctx, c, pc)
			}
		}
		f.log.Debug("modern face: unknown or expired requestState; starting the request afresh")
	}
	caps := c.caps()
	cctx, cancel := context.WithCancel(f.ctx)
	if er, ok := edge.FromContext(ctx); ok {
		// The call outlives this request but is its call: its upstream
		// POSTs carry the client's trace and X-Forwarded-* headers
		// (edge.Request.ForwardHeader).
		cctx = edge.NewContext(cctx, er)
	}
	pc := &pendingCall{
		f: f, token: randomID(), principal: c.principal, method: c.method, name: name,
		sess: s, lc: lc, caps: caps, cancel: cancel,
		events: make(chan struct{}, 1), outstanding: map[string]translate.InputEntry{},
		attached: c,
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		opts := legacyup.CallOptions{OnRequest: pc.onRequest, OnNotify: pc.onNotify}
		res, err := s.Call(cctx, c.method, params, opts)
		if next := f.replacement(cctx, c, s, err); next != nil {
			pc.mu.Lock()
			pc.sess = next // answers go to the session the call runs on
			pc.mu.Unlock()
			res, err = next.Call(cctx, c.method, params, opts)
		}
		pc.mu.Lock()
		pc.done, pc.result, pc.err = true, res, err
		pc.mu.Unlock()
		pc.signal()
	}()
	return f.await(ctx, c, pc)
}

// deliver answers the outstanding input requests a retry brings; keys not
// outstanding are ignored (M-48: SHOULD ignore unexpected input).
func (pc *pendingCall) deliver(ctx context.Context, responses modern.InputResponses) error {
	pc.mu.Lock()
	type answer struct {
		key   string
		entry translate.InputEntry
		raw   json.RawMessage
	}
	var answers []answer
	for _, k := range pc.order {
		e, ok := pc.outstanding[k]
		if !ok {
			continue
		}
		a, ok := responses[k]
		if !ok {
			continue
		}
		raw, err := translate.InputResponseToLegacy(e.Request, a)
		if err != nil {
			pc.mu.Unlock()
			return rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: inputResponses[%q]: %s", k, rpc.As(err).Message)
		}
		answers = append(answers, answer{k, e, raw})
	}
	for _, a := range answers {
		delete(pc.outstanding, a.key)
	}
	pc.mu.Unlock()
	for _, a := range answers {
		if err := pc.sess.Respond(ctx, a.entry.LegacyID, a.raw, nil); err != nil {
			return upstreamError(pc.method, err)
		}
	}
	return nil
}

// await waits for the upstream call's next step: its final answer, or input
// requests to hand the client (every outstanding one, M-17).
func (f *Face) await(ctx context.Context, c *call, pc *pendingCall) (json.RawMessage, error) {
	pc.mu.Lock()
	pc.attached = c
	pc.mu.Unlock()
	defer func() {
		pc.mu.Lock()
		if pc.attached == c {
			pc.attached = nil
		}
		pc.mu.Unlock()
	}()
	settled := false
	for {
		pc.mu.Lock()
		if pc.refused != nil {
			err := pc.refused
			pc.mu.Unlock()
			f.dropPending(pc)
			pc.cancel() // the upstream call cannot complete without the refused input
			return nil, err
		}
		if pc.done {
			res, err := pc.result, pc.err
			pc.mu.Unlock()
			f.dropPending(pc)
			if err != nil {
				return nil, upstreamError(c.method, err)
			}
			return f.finishCall(ctx, c, pc.sess, pc.lc, res)
		}
		if len(pc.outstanding) > 0 && !settled {
			// A legacy tool that asks several questions at once sends them
			// one by one on its stream: gather them into one round (M-17:
			// the client builds every requested input before retrying)
			// rather than a round per question.
			pc.mu.Unlock()
			f.settle(ctx, pc)
			settled = true
			continue
		}
		if len(pc.outstanding) > 0 {
			reqs := modern.InputRequests{}
			for _, k := range pc.order {
				if e, ok := pc.outstanding[k]; ok {
					reqs[k] = e.Request
				}
			}
			pc.mu.Unlock()
			f.keepPending(pc)
			ir := modern.InputRequiredResult{InputRequests: reqs, RequestState: modern.RequestState(f.seal(pc)), Meta: f.resultMeta()}
			return marshalResult(ir)
		}
		events := pc.events
		registered := pc.registered
		pc.mu.Unlock()
		select {
		case <-events:
		case <-ctx.Done():
			if !registered {
				// The client went away before any round (M-43: a
				// disconnect is a cancellation).
				pc.cancel()
			}
			return nil, ctx.Err()
		}
	}
}

// inputSettle is how long an upstream call that asked for input stays quiet
// before its questions go out as one round; inputSettleMax bounds the wait
// for a call that keeps asking.
const (
	inputSettle    = 100 * time.Millisecond
	inputSettleMax = time.Second
)

// settle waits until pc has asked nothing new for inputSettle (at most
// inputSettleMax), or ended, or the request ended.
func (f *Face) settle(ctx context.Context, pc *pendingCall) {
	limit := time.NewTimer(inputSettleMax)
	defer limit.Stop()
	quiet := time.NewTimer(inputSettle)
	defer quiet.Stop()
	for {
		select {
		case <-pc.events:
			pc.mu.Lock()
			over := pc.done || pc.refused != nil
			pc.mu.Unlock()
			if over {
				return
			}
			quiet.Reset(inputSettle)
		case <-quiet.C:
			return
		case <-limit.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// keepPending registers pc for a retry and (re)arms its expiry.
func (f *Face) keepPending(pc *pendingCall) {
	f.mu.Lock()
	f.pending[pc.token] = pc
	f.mu.Unlock()
	pc.mu.Lock()
	pc.registered = true
	if pc.timer != nil {
		pc.timer.Stop()
	}
	pc.timer = time.AfterFunc(f.opts.MRTRTimeout, func() {
		f.log.Debug("modern face: an MRTR round was never retried; cancelling the upstream call")
		f.dropPending(pc)
		pc.cancel()
	})
	pc.mu.Unlock()
}

func (f *Face) dropPending(pc *pendingCall) {
	f.mu.Lock()
	if f.pending[pc.token] == pc {
		delete(f.pending, pc.token)
	}
	f.mu.Unlock()
	pc.mu.Lock()
	if pc.timer != nil {
		pc.timer.Stop()
	}
	pc.mu.Unlock()
}

// hasRetryMembers reports whether the params carry an MRTR retry's members
// (inputResponses or requestState, M-48).
func (c *call) hasRetryMembers() bool {
	o, ok := c.members()
	return !ok || o.Has("inputResponses") || o.Has("requestState")
}
