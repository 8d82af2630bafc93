package legacyface

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/translate"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// maxMRTRRounds bounds the input_required rounds of one request (go-sdk's
// client uses the same limit).
const maxMRTRRounds = 10

// forward carries a non-task request across the eras: the
// legacy params, stamped with the per-request _meta, go upstream; an MRTR
// input_required answer is turned into real requests to the client and the
// request retried; the result loses its 2026-only members.
func (s *session) forward(ctx context.Context, ri *reqInfo, method string) (mcp.Result, error) {
	ri.stream.markReady()
	opts, meta, err := s.callOptions(ri)
	if err != nil {
		return nil, err
	}
	up, err := translate.RequestToModernPrepared(method, ri.raw, meta, "")
	if err != nil {
		return nil, err
	}
	relay := s.relay(ctx, ri)
	opts.OnNotify = relay.push
	opts.Stamped = true // RequestToModern stamped this session's _meta
	_, raw, err := s.callUpstream(ctx, method, up.Params, opts)
	relay.stop()
	if err != nil {
		return nil, s.b.upstreamError(method, false, err)
	}
	out, err := legacyResult(raw)
	if err != nil {
		return nil, err
	}
	return newRaw(out)
}

// toolsList forwards tools/list and, on a 2025-11-25 session, advertises
// execution.taskSupport "optional" on every tool: the bridge accepts both
// task and plain calls for any tool, because a modern server decides per
// request (L-09, M-50).
func (s *session) toolsList(ctx context.Context, ri *reqInfo) (mcp.Result, error) {
	opts, meta, err := s.callOptions(ri)
	if err != nil {
		return nil, err
	}
	up, err := translate.RequestToModernPrepared(legacy.MethodToolsList, ri.raw, meta, "")
	if err != nil {
		return nil, err
	}
	opts.Stamped = true // RequestToModern stamped this session's _meta
	raw, err := s.b.upstreamCall(ctx, legacy.MethodToolsList, up.Params, opts)
	if err != nil {
		return nil, s.b.upstreamError(legacy.MethodToolsList, false, err)
	}
	// M-11: remember the tools' x-mcp-header annotations and hide tools
	// whose annotations are invalid (mcpparam.go).
	raw = s.b.filterToolsList(up.Params, raw)
	var out json.RawMessage
	if s.tasksEnabled() {
		out, err = translate.ToolsListToLegacy(raw, nil)
	} else {
		out, err = translate.ResultToLegacy(raw)
	}
	if err != nil {
		return nil, err
	}
	return newRaw(dropMetaKey(out, modern.MetaKeyServerInfo))
}

// callUpstream sends one request and runs its MRTR rounds: every
// input_required answer becomes real server→client requests on this
// request's stream, and the request is retried with the answers, the echoed
// requestState and a new id (M-17, M-18). It returns a complete result or,
// for tools/call, a task.
func (s *session) callUpstream(ctx context.Context, method string, params json.RawMessage, opts modernup.CallOptions) (translate.CallKind, json.RawMessage, error) {
	cur := params
	for round := 0; ; round++ {
		var raw json.RawMessage
		var err error
		if method == legacy.MethodToolsCall {
			var out *modernup.ToolOutcome
			if out, err = s.b.upstreamCallTool(ctx, cur, opts); err == nil {
				raw = out.Raw
			}
		} else {
			raw, err = s.b.upstreamCall(ctx, method, cur, opts)
		}
		if err != nil {
			return 0, nil, err
		}
		kind, err := translate.ClassifyUpstreamResult(method, raw)
		if err != nil {
			return 0, nil, err
		}
		if kind != translate.CallInputRequired {
			return kind, raw, nil
		}
		if round+1 >= maxMRTRRounds {
			return 0, nil, rpc.Errorf(rpc.CodeInternalError, "upstream %s asked for input %d times on %s; giving up", s.b.target, maxMRTRRounds, method)
		}
		answers, err := s.fulfil(ctx, raw)
		if err != nil {
			return 0, nil, err
		}
		if cur, err = translate.MRTRRetryParams(params, raw, answers); err != nil {
			return 0, nil, err
		}
	}
}

// fulfil asks the client every input request of an MRTR InputRequiredResult,
// concurrently, on the current request's stream (the handler's ctx routes
// them there: go-sdk sends a server→client request on the stream of the
// request whose context it is given; docs/ARCHITECTURE.md, What go-sdk
// v1.8.0 leaves to the bridge).
func (s *session) fulfil(ctx context.Context, inputRequired json.RawMessage) (modern.InputResponses, error) {
	ir, err := modern.DecodeInputRequiredResult(inputRequired)
	if err != nil {
		return nil, rpc.Errorf(rpc.CodeInternalError, "upstream %s sent an invalid input_required result: %s", s.b.target, rpc.As(err).Message)
	}
	answers := modern.InputResponses{}
	if len(ir.InputRequests) == 0 {
		return answers, nil // load shedding: retry at once with the requestState
	}
	caps := s.clientCaps()
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		firstEr error
	)
	for _, key := range ir.InputRequests.Keys() {
		req := ir.InputRequests[key]
		side, err := translate.InputRequestToLegacy("", key, req, caps, sideIDs)
		if err != nil {
			return nil, rpc.Errorf(rpc.CodeInternalError, "upstream %s asked for input the client cannot give: %s", s.b.target, rpc.As(err).Message)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := s.ask(ctx, side)
			if err == nil {
				var a json.RawMessage
				if a, err = translate.InputResponseFromLegacy(req, resp); err == nil {
					mu.Lock()
					answers[key] = a
					mu.Unlock()
					return
				}
			}
			mu.Lock()
			if firstEr == nil {
				firstEr = err
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if firstEr != nil {
		return nil, firstEr
	}
	return answers, nil
}

// relayer hands the upstream's progress and log notifications of one call to
// the client, in order, on the call's own stream.
type relayer struct {
	s    *session
	ri   *reqInfo
	ctx  context.Context
	ch   chan upstreamNote
	done chan struct{}
	mu   sync.Mutex
	shut bool
}

type upstreamNote struct {
	method string
	params json.RawMessage
}

func (s *session) relay(ctx context.Context, ri *reqInfo) *relayer {
	r := &relayer{s: s, ri: ri, ctx: ctx, ch: make(chan upstreamNote, 64), done: make(chan struct{})}
	go r.run()
	return r
}

// push must not block (upstream.CallOptions.OnNotify); a client that falls
// 64 notifications behind loses the newest ones.
func (r *relayer) push(method string, params json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shut {
		return
	}
	select {
	case r.ch <- upstreamNote{method, append(json.RawMessage(nil), params...)}:
	default:
	}
}

// stop delivers what is queued and returns, so notifications precede the
// response.
func (r *relayer) stop() {
	r.mu.Lock()
	if !r.shut {
		r.shut = true
		close(r.ch)
	}
	r.mu.Unlock()
	<-r.done
}

func (r *relayer) run() {
	defer close(r.done)
	for n := range r.ch {
		r.s.deliver(r.ctx, r.ri, n.method, n.params)
	}
}

// deliver sends one notification about a request to the client: on the
// lean path straight onto the request's stream (log messages filtered by
// the session's level, as go-sdk does), otherwise through go-sdk.
func (s *session) deliver(ctx context.Context, ri *reqInfo, method string, params json.RawMessage) {
	if ri != nil && ri.out != nil {
		if method == modern.NotificationMessage {
			var p struct {
				Level string `json:"level"`
			}
			s.mu.Lock()
			lvl := s.logLevel
			s.mu.Unlock()
			if json.Unmarshal(params, &p) != nil || !logEnabled(lvl, p.Level) {
				return
			}
			params = dropMetaKey(params, modern.MetaKeySubscriptionID)
		}
		_ = ri.out.notify(method, params)
		return
	}
	ss := s.serverSession()
	if ss == nil {
		return
	}
	switch method {
	case modern.NotificationProgress:
		var p mcp.ProgressNotificationParams
		if json.Unmarshal(params, &p) == nil && p.ProgressToken != nil {
			if f, ok := p.ProgressToken.(float64); ok && f == float64(int64(f)) {
				p.ProgressToken = int64(f)
			}
			_ = ss.NotifyProgress(ctx, &p)
		}
	case modern.NotificationMessage:
		var p mcp.LoggingMessageParams
		if json.Unmarshal(params, &p) == nil {
			if p.Meta != nil {
				delete(p.Meta, modern.MetaKeySubscriptionID)
			}
			_ = ss.Log(ctx, &p)
		}
	}
}

// legacyResult is an upstream result as a legacy client gets it: without
// the 2026-only members (translate.ResultToLegacy) and without the
// 2026-only _meta serverInfo (the bridge may strip or keep it; legacy
// clients have no use for it).
func legacyResult(raw json.RawMessage) (json.RawMessage, error) {
	out, err := translate.ResultToLegacy(raw)
	if err != nil {
		return nil, err
	}
	return dropMetaKey(out, modern.MetaKeyServerInfo), nil
}

// dropMetaKey removes _meta[key] from a result object (and _meta when it
// becomes empty); anything unexpected is returned unchanged.
func dropMetaKey(obj json.RawMessage, key string) json.RawMessage {
	// Almost every answer has no such key: one walk of the top level
	// (and of _meta) says so without decoding a large result into a map.
	has := false
	for k, v := range rawjson.All(obj) {
		if string(rawjson.KeyBytes(k)) != "_meta" {
			continue
		}
		for mk := range rawjson.All(v) {
			if string(rawjson.KeyBytes(mk)) == key {
				has = true
			}
		}
	}
	if !has {
		return obj
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return obj
	}
	metaRaw, ok := m["_meta"]
	if !ok {
		return obj
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(metaRaw, &meta) != nil {
		return obj
	}
	if _, ok := meta[key]; !ok {
		return obj
	}
	delete(meta, key)
	if len(meta) == 0 {
		delete(m, "_meta")
	} else {
		b, err := json.Marshal(meta)
		if err != nil {
			return obj
		}
		m["_meta"] = b
	}
	b, err := json.Marshal(m)
	if err != nil {
		return obj
	}
	return b
}

// callHead reads a tools/call's tool name and _meta.progressToken from its
// params member by member, skipping the arguments (most of a large call)
// instead of decoding them. As encoding/json into a struct would: names
// match case-insensitively, the last duplicate wins, a name that is not a
// string is "".
func callHead(params []byte) (name string, progressToken json.RawMessage) {
	for k, v := range rawjson.All(params) {
		switch key := string(rawjson.KeyBytes(k)); {
		case strings.EqualFold(key, "name"):
			name = ""
			if len(v) > 0 && v[0] == '"' {
				_ = json.Unmarshal(v, &name)
			}
		case strings.EqualFold(key, "_meta"):
			for mk, mv := range rawjson.All(v) {
				if strings.EqualFold(string(rawjson.KeyBytes(mk)), "progressToken") {
					progressToken = bytes.Clone(mv)
				}
			}
		}
	}
	return name, progressToken
}
