package modernface

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// The lean path answers the face's HTTP requests without go-sdk's server:
// the front (http.go) decodes the message once and checks the era, the
// per-request _meta and the headers (M-37, M-38, M-43, M-67); here the
// method's handler (dispatch, the same one go-sdk's path calls) runs with
// those decoded params, and its answer is written straight onto the
// response: application/json, or an event stream once a progress
// notification must go out before the answer (M-35: only synchronous work
// reports progress) — unless the answer may still be a -32021, which must
// carry HTTP 400 (M-39): the progress then waits for the answer (hold). Every method the face serves goes this way when the
// request is one go-sdk's StreamableHTTPHandler would take as it is
// (leanFit); anything else (a missing Accept type, a Last-Event-ID on a
// POST, params of the wrong shape) is left to go-sdk, built on first use,
// so such a request gets exactly the answer it always got.

// leanFit reports whether the lean path answers a request with header h,
// method and params (split into members o): go-sdk's stateless handler
// would accept it unchanged (Content-Type application/json; Accept naming
// JSON and event streams; no Last-Event-ID) and decode its params into the
// method's parameter type without an error. It is conservative: where in
// doubt, go-sdk answers.
func leanFit(h http.Header, method string, params json.RawMessage, o rawjson.Object) bool {
	if ct := h.Get("Content-Type"); ct != "application/json" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return false
		}
	}
	if !acceptsJSONAndSSE(h.Values("Accept")) || len(h.Values("Last-Event-ID")) > 0 {
		return false
	}
	return paramsFit(method, params, o)
}

// splitParams splits a request's params into members; false when they are
// no object.
func splitParams(params json.RawMessage) (rawjson.Object, bool) {
	if !rawjson.IsObject(params) {
		return rawjson.Object{}, false
	}
	o, err := rawjson.Decode(params)
	return o, err == nil
}

// mediaRefusal is the JSON-RPC error (and its HTTP status) for a request
// whose Content-Type is not JSON or whose Accept does not name both answer
// types: the refusals go-sdk's handler would write as plain text, with the
// same statuses (415, 400), so that a client gets words in a JSON-RPC body.
func mediaRefusal(h http.Header) (*rpc.Error, int) {
	if ct := h.Get("Content-Type"); ct != "application/json" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return rpc.Errorf(rpc.CodeInvalidRequest, "Invalid Request: the Content-Type must be application/json (got %q)", ct),
				http.StatusUnsupportedMediaType
		}
	}
	if !acceptsJSONAndSSE(h.Values("Accept")) {
		return rpc.Errorf(rpc.CodeInvalidRequest, "Invalid Request: the Accept header must name both application/json and "+
			"text/event-stream (got %q)", strings.Join(h.Values("Accept"), ", ")), http.StatusBadRequest
	}
	return nil, 0
}

// acceptsJSONAndSSE reports whether Accept values name both answer types a
// 2026-07-28 server may choose (go-sdk answers 400 otherwise).
func acceptsJSONAndSSE(values []string) bool {
	jsonOK, sseOK := false, false
	for _, v := range values {
		for tok := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(tok, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				sseOK = true
			case "*/*":
				jsonOK, sseOK = true, true
			}
		}
	}
	return jsonOK && sseOK
}

// paramsFit reports whether params (an object, split into o) have the
// member types of method's parameters as go-sdk decodes them; a member
// go-sdk would refuse sends the request to go-sdk, whose -32602 names the
// member.
func paramsFit(method string, params json.RawMessage, o rawjson.Object) bool {
	if m, ok := o.Get("_meta"); ok && !rawjson.IsObject(m) {
		return false
	}
	switch method {
	case modern.MethodToolsCall:
		return stringMember(o, "name") && mrtrFit(o)
	case modern.MethodPromptsGet:
		return stringMember(o, "name") && stringMapMember(o, "arguments") && mrtrFit(o)
	case modern.MethodResourcesRead:
		return stringMember(o, "uri") && mrtrFit(o)
	case modern.MethodToolsList, modern.MethodPromptsList, modern.MethodResourcesList, modern.MethodResourceTemplates:
		return stringMember(o, "cursor")
	case modern.MethodCompletion:
		var p mcp.CompleteParams
		return json.Unmarshal(params, &p) == nil
	case modern.MethodDiscover, modern.MethodTasksGet, modern.MethodTasksUpdate, modern.MethodTasksCancel:
		return true // go-sdk takes any params object for these
	}
	return false
}

// stringMember: key is absent or a string.
func stringMember(o rawjson.Object, key string) bool {
	v, ok := o.Get(key)
	return !ok || rawjson.Kind(v) == "a string"
}

// stringMapMember: key is absent or an object of strings.
func stringMapMember(o rawjson.Object, key string) bool {
	v, ok := o.Get(key)
	if !ok {
		return true
	}
	m, err := rawjson.Decode(v)
	if err != nil {
		return false
	}
	for _, mem := range m.Members() {
		if rawjson.Kind(mem.Val) != "a string" {
			return false
		}
	}
	return true
}

// mrtrFit: the MRTR retry members (M-48) are absent or of go-sdk's types.
func mrtrFit(o rawjson.Object) bool {
	if !stringMember(o, "requestState") {
		return false
	}
	v, ok := o.Get("inputResponses")
	if !ok {
		return true
	}
	if !rawjson.IsObject(v) {
		return false
	}
	var m mcp.InputResponseMap
	return m.UnmarshalJSON(v) == nil
}

// Encoded answers and events use the buffers every request path shares.
var getBuf, putBuf = mcpio.GetBuffer, mcpio.PutBuffer

// serveLean answers one request the front checked (meta is its decoded
// per-request _meta) with the face's handler.
func (f *Face) serveLean(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request, params rawjson.Object, meta modern.RequestMeta, principal, authz string) {
	c := &call{method: req.Method, params: req.Params, meta: meta, principal: principal, authorization: authz}
	c.withMembers(params)
	out := &leanOut{w: w, hold: mayNeedUndeclared(c)}
	if !f.opts.JSONResponse {
		c.progress = out.progress
	}
	res, err := f.dispatch(r.Context(), c)
	if err != nil && r.Context().Err() != nil {
		return // the client went away: nobody reads the answer
	}
	if err != nil && out.relayAuth(r, req.ID, err) {
		return // the upstream's 401/403 (autherr.go)
	}
	out.answer(req.ID, res, err)
}

// leanOut is the response of one lean request.
type leanOut struct {
	w    http.ResponseWriter
	mu   sync.Mutex
	send func(jsonrpc.Message) error // set once the response is an event stream
	done bool                        // the answer went out
	// hold: the answer may still be a -32021, which must go out with HTTP
	// 400 (M-39), so nothing commits the response to a 200 event stream
	// before it: progress notifications wait in held (the latest
	// maxHeldProgress) and go out just before a 200 answer.
	hold bool
	held []json.RawMessage
}

// maxHeldProgress bounds the progress notifications a held response keeps
// (the oldest go first: a later progress supersedes them).
const maxHeldProgress = 32

// mayNeedUndeclared reports whether the answer to c may be a -32021 found
// only while the upstream runs the call: an MRTR-capable request (the
// upstream may ask for input mid-call) whose client did not declare every
// kind of input a legacy upstream can ask for (form and url elicitation,
// sampling, roots), so an upstream question may need a capability the
// request lacks (M-39, M-48).
func mayNeedUndeclared(c *call) bool {
	if !modern.MRTRCapable(c.method) {
		return false
	}
	caps := c.caps()
	return !caps.SupportsElicitationForm() || !caps.SupportsElicitationURL() || !caps.SupportsSampling() || !caps.SupportsRoots()
}

// progress relays a progress notification of the request (M-35), turning
// the response into an event stream first.
func (o *leanOut) progress(_ context.Context, p *mcp.ProgressNotificationParams) {
	params, err := json.Marshal(p)
	if err != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return
	}
	if o.hold {
		if len(o.held) == maxHeldProgress {
			o.held = append(o.held[:0], o.held[1:]...)
		}
		o.held = append(o.held, params)
		return
	}
	o.openStream()
	_ = o.send(&jsonrpc.Request{Method: legacy.MethodProgress, Params: params})
}

// openStream makes the response an event stream (HTTP 200), once.
func (o *leanOut) openStream() {
	if o.send == nil {
		o.w.Header().Set("Connection", "keep-alive")
		o.send, _ = mcpio.OpenSSE(o.w)
	}
}

// answer writes the response to id: an event on a stream, otherwise an
// application/json body. Errors that are not JSON-RPC errors become -32603.
func (o *leanOut) answer(id jsonrpc.ID, res json.RawMessage, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return
	}
	o.done = true
	if o.send == nil && len(o.held) > 0 && okStatus(err) {
		// A 200 answer: the held progress goes out first, as it would have.
		o.openStream()
		for _, p := range o.held {
			_ = o.send(&jsonrpc.Request{Method: legacy.MethodProgress, Params: p})
		}
	}
	if o.send != nil {
		msg := &jsonrpc.Response{ID: id, Result: res}
		if err != nil {
			msg.Result, msg.Error = nil, rpc.As(err)
		}
		_ = o.send(msg)
		return
	}
	status := http.StatusOK
	if err != nil {
		status = errorStatus(rpc.As(err).Code)
		if st, retry, ok := rpc.LimitHTTP(err); ok {
			// A limit refusal (docs/CONFORMANCE.md, limit refusals): 429 or
			// 503, and when to try again.
			status = st
			o.w.Header().Set("Retry-After", strconv.Itoa(retry))
		}
	}
	buf := getBuf()
	defer putBuf(buf)
	if eerr := envelope(buf, id, res, err); eerr != nil {
		mcpio.WriteRPCError(o.w, http.StatusOK, id, rpc.Errorf(rpc.CodeInternalError, "internal error: encode the answer: %v", eerr))
		return
	}
	o.w.Header().Set("Cache-Control", "no-cache, no-transform")
	mcpio.WriteJSON(o.w, status, buf.Bytes())
}

// okStatus reports whether the answer err (nil: a result) goes out with
// HTTP 200.
func okStatus(err error) bool {
	if err == nil {
		return true
	}
	if _, _, limit := rpc.LimitHTTP(err); limit {
		return false
	}
	return errorStatus(rpc.As(err).Code) == http.StatusOK
}

// errorStatus is the HTTP status of a JSON-RPC error answer in 2026-07-28:
// 404 for -32601 (M-42), 400 for -32602, -32022 and -32021 (M-38, M-39),
// 200 for the rest.
func errorStatus(code int64) int {
	switch code {
	case rpc.CodeMethodNotFound:
		return http.StatusNotFound
	case rpc.CodeInvalidParams, rpc.CodeUnsupportedProtocolVersion, rpc.CodeMissingRequiredClientCapability:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// envelope encodes the JSON-RPC response to id into b: the result (JSON the
// face built), or the error.
func envelope(b *bytes.Buffer, id jsonrpc.ID, res json.RawMessage, err error) error {
	if err != nil || len(res) == 0 {
		e := rpc.As(err)
		if e == nil {
			e = rpc.Errorf(rpc.CodeInternalError, "internal error: no result")
		}
		eb, eerr := rawjson.Marshal(e) // as modern.EncodeError writes it: no HTML escaping
		if eerr != nil {
			return eerr
		}
		mcpio.AppendResponse(b, id, nil, eb)
		return nil
	}
	mcpio.AppendResponse(b, id, res, nil)
	return nil
}
