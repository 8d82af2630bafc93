package translate

import (
	"encoding/json"
	"sort"

	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// SideRequest is one legacy server→client request the bridge sends a legacy
// client for an input request of an upstream task (or of an MRTR round).
type SideRequest struct {
	// Request is the whole JSON-RPC request; its id is freshly minted.
	Request legacy.Request
	// Key is the upstream inputRequests key the answer belongs to.
	Key string
	// ElicitationID is the id minted for a URL-mode elicitation ("" otherwise).
	ElicitationID string
}

// InputRequestToLegacy turns one upstream inputRequests entry (key → {method,
// params}) into the legacy server→client request the bridge sends on the
// waiting tasks/result stream (L-46; docs/ARCHITECTURE.md, The one wait rule):
//   - the params go over unchanged — the legacy client applies its own trust
//     model and UI to them, exactly as for a standalone request (M-19, M-29) —
//     minus any "task" member (the bridge never task-augments requests towards
//     a client);
//   - _meta["io.modelcontextprotocol/related-task"] = {taskId} is merged into
//     params._meta (L-32, L-33); taskID "" (an MRTR round of an ordinary
//     request) adds none;
//   - a URL-mode elicitation gets the elicitationId 2025-11-25 requires and
//     2026 dropped, minted from ids;
//   - the JSON-RPC id is minted from ids: non-null, never reused in the
//     session when ids is session-unique (L-84);
//   - a request the client did not declare a capability for (elicitation
//     mode, sampling, roots; caps are the capabilities the bridge declared
//     upstream for this client, UpstreamRequestMeta) is refused with -32602
//     and not sent (L-82).
//
// Implements L-32, L-33, L-46, L-82, L-84, M-19, M-28, M-29.
func InputRequestToLegacy(taskID, key string, req modern.InputRequest, caps modern.ClientCapabilities, ids IDSource) (SideRequest, error) {
	if key == "" {
		return SideRequest{}, internalErr("input request without a key")
	}
	if err := req.Validate(); err != nil {
		return SideRequest{}, upstreamErr("input request "+key, err)
	}
	if err := CheckInputCapability(key, req, caps); err != nil {
		return SideRequest{}, err
	}
	p, err := decodeObject(req.Params, "input request params", true)
	if err != nil {
		return SideRequest{}, upstreamErr("input request "+key, err)
	}
	p = p.Clone()
	p.Del("task")
	out := SideRequest{Key: key}
	if req.ElicitationMode() == "url" {
		out.ElicitationID = ids.NewID()
		if err := p.Set("elicitationId", out.ElicitationID); err != nil {
			return SideRequest{}, err
		}
	}
	var params json.RawMessage
	if p.Len() > 0 || taskID != "" {
		params = p.Bytes()
	}
	if taskID != "" {
		if params, err = legacy.SetRelatedTask(params, taskID); err != nil {
			return SideRequest{}, upstreamErr("input request "+key, err)
		}
	}
	out.Request = legacy.Request{ID: legacy.StringID(ids.NewID()), Method: req.Method, Params: params}
	if err := out.Request.Validate(); err != nil {
		return SideRequest{}, internalErr("side-channel request: %s", rpc.As(err).Message)
	}
	return out, nil
}

// CheckInputCapability reports whether a client that declared caps may be
// asked req (L-82; M-48 "ask only for input the client has the capability
// for"): an elicitation needs the elicitation capability for its mode —
// "form" (also when mode is absent; an empty elicitation object declares
// form) or "url"; any other mode is one no client can have declared —,
// sampling/createMessage needs sampling, roots/list needs roots. A refusal is
// -32602 naming key and the missing capability; the request must not be sent.
// The modern face applies the same check to what it shows a modern client.
//
// Implements L-82, M-48.
func CheckInputCapability(key string, req modern.InputRequest, caps modern.ClientCapabilities) error {
	switch req.Kind() {
	case modern.InputElicitation:
		switch mode := req.ElicitationMode(); {
		case mode != "form" && mode != "url":
			return rpc.Errorf(rpc.CodeInvalidParams,
				"input request %q asks for an elicitation in mode %q, which no client can declare (known modes: form, url)", key, mode)
		case (mode == "url" && !caps.SupportsElicitationURL()) || (mode == "form" && !caps.SupportsElicitationForm()):
			return rpc.Errorf(rpc.CodeInvalidParams,
				"input request %q asks for a %s-mode elicitation, which the client did not declare (elicitation.%s)", key, mode, mode)
		}
	case modern.InputSampling:
		if !caps.SupportsSampling() {
			return rpc.Errorf(rpc.CodeInvalidParams, "input request %q asks for sampling, which the client did not declare", key)
		}
	case modern.InputRoots:
		if !caps.SupportsRoots() {
			return rpc.Errorf(rpc.CodeInvalidParams, "input request %q asks for roots, which the client did not declare", key)
		}
	default:
		return rpc.Errorf(rpc.CodeInvalidParams, "input request %q uses method %q, which is not elicitation/create, sampling/createMessage or roots/list", key, req.Method)
	}
	return nil
}

// InputResponseFromLegacy turns the legacy client's JSON-RPC response to a
// SideRequest into the inputResponses value for the same key (which then goes
// upstream in tasks/update, or in an MRTR retry):
//   - a result must have the shape of req's kind (ElicitResult for
//     elicitation/create, CreateMessageResult for sampling, ListRootsResult for
//     roots/list), else -32602; any related-task _meta is dropped (TS clients
//     add none anyway; correlation is by JSON-RPC id, L-84);
//   - an error response to an elicitation is answered upstream as
//     {"action":"cancel"} (the user could not act); for sampling and roots
//     there is no such value: -32603 carrying the client's error as data, so
//     the face leaves the key unanswered (the upstream re-asks, M-48).
//
// Implements M-28, M-30 (one answer per key).
func InputResponseFromLegacy(req modern.InputRequest, response []byte) (json.RawMessage, error) {
	resp, err := legacy.DecodeResponse(response)
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		if req.Kind() == modern.InputElicitation {
			return json.RawMessage(`{"action":"cancel"}`), nil
		}
		return nil, rpc.WithData(rpc.CodeInternalError,
			"client answered "+req.Method+" with an error: "+resp.Error.Message, resp.Error)
	}
	return answerFor(req, resp.Result, legacy.RelatedTaskKey)
}

// answerFor checks that answer has the shape req asks for and drops the given
// _meta keys and a resultType.
func answerFor(req modern.InputRequest, answer []byte, dropMeta ...string) (json.RawMessage, error) {
	o, err := decodeObject(answer, req.Method+" answer", false)
	if err != nil {
		return nil, err
	}
	kind, err := modern.ClassifyInputResponse(answer)
	if err != nil {
		return nil, err
	}
	if kind != req.Kind() || kind == modern.InputUnknown {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "answer to %s has the shape of a %s result", req.Method, kind)
	}
	if o, err = withoutMetaKeys(o, req.Method+" answer", dropMeta...); err != nil {
		return nil, err
	}
	if o.Has("resultType") {
		o = o.Clone()
		o.Del("resultType")
	}
	return o.Bytes(), nil
}

// TasksUpdateParams builds the tasks/update params that send answers upstream
// under the keys the upstream used (M-28, M-30). meta must
// declare the tasks extension (M-20); the face adds Mcp-Name: taskId (M-32).
//
// Implements M-20, M-28.
func TasksUpdateParams(taskID string, answers modern.InputResponses, meta modern.RequestMeta) (modern.UpdateTaskParams, error) {
	if taskID == "" || len(answers) == 0 {
		return modern.UpdateTaskParams{}, internalErr("tasks/update needs a taskId and at least one answer")
	}
	if !meta.TasksDeclared() {
		return modern.UpdateTaskParams{}, internalErr("tasks/update must declare the tasks extension (M-20)")
	}
	if err := answers.Validate(); err != nil {
		return modern.UpdateTaskParams{}, internalErr("tasks/update: %s", rpc.As(err).Message)
	}
	return modern.UpdateTaskParams{TaskID: taskID, InputResponses: answers, Meta: &meta}, nil
}

// InputEntry is a legacy upstream's server→client request, held by the modern
// face as an inputRequests entry of a task.
type InputEntry struct {
	// Key is the inputRequests key, minted from ids: unique for the task's
	// lifetime, never reused (M-57).
	Key     string
	Request modern.InputRequest
	// LegacyID is the JSON-RPC id to answer the legacy upstream with.
	LegacyID json.RawMessage
	// TaskID is the related-task taskId the upstream put in _meta ("" when it
	// put none).
	TaskID string
	// ElicitationID is the elicitationId removed from a URL-mode elicitation
	// (2026 has none); kept to match a later notifications/elicitation/complete.
	ElicitationID string
}

// InputRequestFromLegacy turns a legacy upstream's server→client request
// (elicitation/create, sampling/createMessage, roots/list, received on the
// stream of the bridge's blocking tasks/result) into an inputRequests entry
// for modern clients: related-task metadata, "task" and a URL elicitation's
// elicitationId are removed, everything else kept; the key is minted from ids.
// Other methods cannot be expressed as input requests: -32601, which is also
// the answer for the upstream.
//
// Implements M-55 (inputRequests of input_required), M-57.
func InputRequestFromLegacy(request []byte, ids IDSource) (InputEntry, error) {
	r, err := legacy.DecodeRequest(request)
	if err != nil {
		return InputEntry{}, upstreamErr("server→client request", err)
	}
	switch r.Method {
	case legacy.MethodElicitationCreate, legacy.MethodSamplingCreateMessage, legacy.MethodRootsList:
	default:
		return InputEntry{}, rpc.Errorf(rpc.CodeMethodNotFound, "%s cannot be relayed to a 2026-07-28 client as an input request", r.Method)
	}
	e := InputEntry{LegacyID: r.ID}
	if id, ok, err := legacy.RelatedTaskOf(r.Params); err != nil {
		return InputEntry{}, upstreamErr(r.Method+" params", err)
	} else if ok {
		e.TaskID = id
	}
	var params json.RawMessage
	if len(r.Params) > 0 {
		p, err := decodeObject(r.Params, r.Method+" params", true)
		if err != nil {
			return InputEntry{}, upstreamErr(r.Method+" params", err)
		}
		p = p.Clone()
		p.Del("task")
		if r.Method == legacy.MethodElicitationCreate {
			if mode, _ := str(p, "mode", "mode"); mode == "url" {
				if e.ElicitationID, err = str(p, "elicitationId", "elicitationId"); err != nil {
					return InputEntry{}, upstreamErr(r.Method+" params", err)
				}
				p.Del("elicitationId")
			}
		}
		if p, err = withoutMetaKeys(p, r.Method+" params", legacy.RelatedTaskKey); err != nil {
			return InputEntry{}, upstreamErr(r.Method+" params", err)
		}
		if p.Len() > 0 || r.Method != legacy.MethodRootsList {
			params = p.Bytes()
		}
	}
	e.Request = modern.InputRequest{Method: r.Method, Params: params}
	if err := e.Request.Validate(); err != nil {
		return InputEntry{}, upstreamErr(r.Method, err)
	}
	e.Key = ids.NewID()
	return e, nil
}

// InputResponseToLegacy turns a modern client's inputResponses value for an
// entry into the result of the JSON-RPC response the bridge sends the legacy
// upstream (matched by InputEntry.LegacyID). The answer must have the shape of
// the request's kind, else -32602.
//
// Implements M-28 (server side of the relay), M-58.
func InputResponseToLegacy(req modern.InputRequest, answer []byte) (json.RawMessage, error) {
	return answerFor(req, answer)
}

// Response builds the whole JSON-RPC response the bridge sends the legacy
// upstream for this entry once a modern client answered it (answer: its
// inputResponses value): id LegacyID, the result checked and shaped as
// InputResponseToLegacy does, and — when the entry belongs to a task (TaskID,
// taken from the upstream's request or set by the face from the stream it
// arrived on) — _meta["io.modelcontextprotocol/related-task"] = {taskId}:
// the bridge is the requestor here, and every response related to a task
// carries it (L-32; TS clients omit it, so legacy receivers correlate by id
// anyway). Prefer it to InputResponseToLegacy.
//
// Implements L-32, M-28, M-58.
func (e InputEntry) Response(answer []byte) (legacy.Response, error) {
	r, err := InputResponseToLegacy(e.Request, answer)
	if err != nil {
		return legacy.Response{}, err
	}
	if e.TaskID != "" {
		if r, err = legacy.SetRelatedTask(r, e.TaskID); err != nil {
			return legacy.Response{}, err
		}
	}
	resp := legacy.Response{ID: e.LegacyID, Result: r}
	if err := resp.Validate(); err != nil {
		return legacy.Response{}, internalErr("response to the upstream's %s: %s", e.Request.Method, rpc.As(err).Message)
	}
	return resp, nil
}

// SelectInputResponses picks from a tasks/update the answers to forward:
// those whose key is currently outstanding and not answered before. Others are
// ignored (the reply is still the empty acknowledgement); a partial set is
// fine and leaves the task input_required (M-58). ignored is sorted.
//
// Implements M-30, M-58.
func SelectInputResponses(outstanding modern.InputRequests, answered map[string]bool, responses modern.InputResponses) (accept modern.InputResponses, ignored []string) {
	accept = modern.InputResponses{}
	for k, v := range responses {
		if _, ok := outstanding[k]; ok && !answered[k] {
			accept[k] = v
		} else {
			ignored = append(ignored, k)
		}
	}
	sort.Strings(ignored)
	return accept, ignored
}
