package translate

import (
	"encoding/json"

	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// ToolsListToLegacy patches an upstream tools/list result for a legacy
// client: every tool gets execution.taskSupport "optional" — the bridge
// accepts both task and non-task calls for any tool (L-09), since a modern
// server decides per request — except "required" for tools the bridge knows
// need a task (the upstream marked them so, or required(name) says it learned
// that the tool answers -32021 without the extension; L-08, M-51). Every other tool member is kept verbatim; the
// 2026-only resultType, ttlMs and cacheScope are dropped. required may be nil.
//
// Implements L-09, L-10.
func ToolsListToLegacy(raw []byte, required func(tool string) bool) (json.RawMessage, error) {
	stripped, err := ResultToLegacy(raw)
	if err != nil {
		return nil, err
	}
	out, err := legacy.PatchListToolsTaskSupport(stripped, func(name string, cur legacy.TaskSupport) legacy.TaskSupport {
		if cur == legacy.TaskSupportRequired || (required != nil && required(name)) {
			return legacy.TaskSupportRequired
		}
		return legacy.TaskSupportOptional
	})
	if err != nil {
		return nil, upstreamErr("tools/list result", err)
	}
	return out, nil
}

// ToolsListToModern turns a legacy upstream's tools/list result into the
// modern one: execution.taskSupport is removed from every tool (the 2026
// schema has no per-tool declaration; the server decides per request), and
// an execution object left empty goes with it; every other member stays
// verbatim. It adds the CacheableResult members the 2026 result requires
// (ttlMs, cacheScope; resultType "complete", M-41) and returns each tool's
// legacy taskSupport, which ToolsCallToLegacy needs.
//
// Implements M-41 (resultType), L-10 (reads the three values only).
func ToolsListToModern(raw []byte, ttlMs int64, scope modern.CacheScope) (json.RawMessage, map[string]legacy.TaskSupport, error) {
	support, err := legacy.ListToolsTaskSupport(raw)
	if err != nil {
		return nil, nil, upstreamErr("tools/list result", err)
	}
	patched, err := legacy.PatchListToolsTaskSupport(raw, func(string, legacy.TaskSupport) legacy.TaskSupport { return "" })
	if err != nil {
		return nil, nil, upstreamErr("tools/list result", err)
	}
	o, err := decodeObject(patched, "tools/list result", false)
	if err != nil {
		return nil, nil, upstreamErr("tools/list result", err)
	}
	var tools []json.RawMessage
	tv, _ := o.Get("tools")
	if err := json.Unmarshal(tv, &tools); err != nil {
		return nil, nil, internalErr("upstream tools/list result: tools must be an array")
	}
	for i, t := range tools {
		to, err := decodeObject(t, "tool", false)
		if err != nil {
			return nil, nil, upstreamErr("tool", err)
		}
		if ex, ok, _ := sub(to, "execution", "tool.execution"); ok && ex.Len() == 0 {
			to.Del("execution")
			tools[i] = to.Bytes()
		}
	}
	if err := o.Set("tools", tools); err != nil {
		return nil, nil, err
	}
	if scope == "" {
		scope = modern.CachePrivate
	}
	for _, kv := range []struct {
		k string
		v any
	}{{"resultType", modern.ResultComplete}, {"ttlMs", max(ttlMs, 0)}, {"cacheScope", scope}} {
		if err := o.Set(kv.k, kv.v); err != nil {
			return nil, nil, err
		}
	}
	return o.Bytes(), support, nil
}

// UpstreamRequest is a legacy client's request made ready for a modern
// upstream.
type UpstreamRequest struct {
	Method string
	// Params: the legacy params without "task" and without related-task _meta,
	// stamped with the per-request _meta (M-01).
	Params json.RawMessage
	// TaskRequested: the legacy client opted in on a tools/call (L-24); the
	// face answers with a legacy CreateTaskResult whatever the upstream does.
	TaskRequested bool
	// RequestedTTL is the ttl the client asked for (nil = none); the
	// upstream cannot be told (2026-07-28 has no requested ttl), the bridge
	// may cap its own bookkeeping to it (L-20).
	RequestedTTL *int64
}

// legacyOnly lists the legacy methods a 2026-07-28 upstream does not have:
// the face answers them itself and must never forward them (M-34).
var legacyOnly = map[string]bool{
	legacy.MethodTasksGet: true, legacy.MethodTasksResult: true, legacy.MethodTasksList: true,
	legacy.MethodTasksCancel: true, legacy.MethodInitialize: true, legacy.MethodPing: true,
	"logging/setLevel": true, "resources/subscribe": true, "resources/unsubscribe": true,
}

// RequestToModern prepares a legacy client's request for a modern upstream
// (docs/ARCHITECTURE.md, The four paths):
//   - "task" is removed whatever the method (M-34: never send params.task to
//     a 2026 server); only on tools/call is it the opt-in, "task": {}
//     included and null excluded (L-24); on any other method it is ignored
//     and the request runs normally (L-05);
//   - tools/call applies the tool-level rules for the tool's advertised
//     support (the value ToolsListToLegacy gave it; "" = optional): no task on
//     a required tool → -32601 (L-08), task on a forbidden one → -32601 (L-07);
//     a client "tasks" capability is never consulted (L-11);
//   - related-task metadata is removed from _meta (the key does not exist in
//     the extension, and receivers ignore it on requests, L-37); meta is then
//     stamped (M-01, M-02, M-20);
//   - legacy-only methods (tasks/*, initialize, ping, logging/setLevel,
//     resources/(un)subscribe) are refused with -32601: the face emulates
//     them and never forwards them (M-34).
//
// Implements L-05, L-07, L-08, L-09, L-11, L-20, L-24, M-01, M-20, M-34.
func RequestToModern(method string, params []byte, meta modern.RequestMeta, support legacy.TaskSupport) (UpstreamRequest, error) {
	return requestToModern(method, params, meta, nil, support)
}

// RequestToModernPrepared is RequestToModern with a meta prepared once
// (modern.PrepareRequestMeta), for a sender that stamps the same _meta on
// many requests: same result, byte for byte and error for error, without
// encoding and validating the meta on every call.
func RequestToModernPrepared(method string, params []byte, meta *modern.PreparedMeta, support legacy.TaskSupport) (UpstreamRequest, error) {
	return requestToModern(method, params, modern.RequestMeta{}, meta, support)
}

// requestToModern stamps prepared when it is set, meta otherwise.
func requestToModern(method string, params []byte, meta modern.RequestMeta, prepared *modern.PreparedMeta, support legacy.TaskSupport) (UpstreamRequest, error) {
	if legacyOnly[method] {
		return UpstreamRequest{}, rpc.Errorf(rpc.CodeMethodNotFound,
			"%s is answered by the bridge itself and never sent to a 2026-07-28 upstream", method)
	}
	rest, task, present, err := legacy.SplitTaskParam(params)
	if err != nil {
		return UpstreamRequest{}, err
	}
	req := UpstreamRequest{Method: method}
	// params are decoded once and stamped from their members: a large
	// call's arguments are scanned, not copied, until the one write of the
	// stamped params.
	var o object
	if method == legacy.MethodToolsCall {
		p, err := decodeSplitObject(rest, "tools/call params", false)
		if err != nil {
			return UpstreamRequest{}, err
		}
		o = p
		name, err := str(p, "name", "tools/call params.name")
		if err != nil {
			return UpstreamRequest{}, err
		}
		if name == "" {
			return UpstreamRequest{}, rpc.Errorf(rpc.CodeInvalidParams, "tools/call params.name is required")
		}
		if support == "" {
			support = legacy.TaskSupportOptional
		}
		asTask, err := legacy.DecideToolCall(name, true, support, present)
		if err != nil {
			return UpstreamRequest{}, err
		}
		req.TaskRequested = asTask
		if asTask && task != nil {
			req.RequestedTTL = task.TTL
		}
	} else if o, err = decodeSplitObject(rest, method+" params", true); err != nil {
		return UpstreamRequest{}, err
	}
	if o, err = withoutMetaKeys(o, method+" params", legacy.RelatedTaskKey); err != nil {
		return UpstreamRequest{}, err
	}
	var stamped json.RawMessage
	if prepared != nil {
		stamped, err = modern.StampPreparedMembers(o.Members(), prepared)
	} else {
		stamped, err = modern.StampRequestMembers(o.Members(), meta)
	}
	if err != nil {
		return UpstreamRequest{}, err
	}
	req.Params = stamped
	return req, nil
}

// LegacyCall is a modern client's tools/call made ready for a legacy upstream.
type LegacyCall struct {
	// Params: without the 2026 per-request _meta keys, without any "task"
	// the client sent, and with "task": {} when AsTask.
	Params json.RawMessage
	// AsTask: the call goes upstream task-augmented and the modern client gets
	// a flat CreateTaskResult (after the mapping is durable, M-53).
	AsTask bool
}

// ToolsCallToLegacy prepares a modern client's tools/call for a legacy
// upstream. support is the tool's legacy taskSupport ("" = forbidden, the
// schema default) and serverToolsCall whether the upstream declared
// tasks.requests.tools.call:
//   - the request's _meta must carry protocolVersion and clientCapabilities
//     (-32602 otherwise, M-37);
//   - a "task" member from the client is ignored (M-66: it is an unknown
//     field under 2026, not an opt-in);
//   - the call is task-augmented only when this request declares the tasks
//     extension (judged per request, M-39, M-50) and the tool allows tasks
//     (optional or required) on a server that accepts them;
//   - a required tool for a client that did not declare the extension →
//     -32021 with data.requiredCapabilities (M-51);
//   - the per-request _meta keys are removed (a legacy server knows them not);
//     progressToken and other keys stay.
//
// Implements M-37, M-39, M-50, M-51, M-66.
func ToolsCallToLegacy(params []byte, support legacy.TaskSupport, serverToolsCall bool) (LegacyCall, error) {
	meta, err := modern.DecodeRequestMeta(params)
	if err != nil {
		return LegacyCall{}, err
	}
	if err := meta.Validate(); err != nil {
		return LegacyCall{}, err
	}
	return ToolsCallToLegacyMeta(params, meta, support, serverToolsCall)
}

// ToolsCallToLegacyMeta is ToolsCallToLegacy for a caller that has already
// decoded params' _meta into meta and validated it (M-37), so the request's
// _meta is not decoded twice.
func ToolsCallToLegacyMeta(params []byte, meta modern.RequestMeta, support legacy.TaskSupport, serverToolsCall bool) (LegacyCall, error) {
	o, err := decodeObject(params, "tools/call params", false)
	if err != nil {
		return LegacyCall{}, err
	}
	name, err := str(o, "name", "tools/call params.name")
	if err != nil {
		return LegacyCall{}, err
	}
	if name == "" {
		return LegacyCall{}, rpc.Errorf(rpc.CodeInvalidParams, "tools/call params.name is required")
	}
	o = o.Clone()
	o.Del("task")
	if o, err = withoutMetaKeys(o, "tools/call params", modern.MetaKeyProtocolVersion, modern.MetaKeyClientCapabilities,
		modern.MetaKeyClientInfo, modern.MetaKeyLogLevel); err != nil {
		return LegacyCall{}, err
	}
	support = support.Effective()
	declared := meta.TasksDeclared()
	taskOK := serverToolsCall && (support == legacy.TaskSupportOptional || support == legacy.TaskSupportRequired)
	if support == legacy.TaskSupportRequired && serverToolsCall && !declared {
		return LegacyCall{}, modern.ErrTasksExtensionRequired(modern.MethodToolsCall)
	}
	call := LegacyCall{AsTask: declared && taskOK}
	if call.AsTask {
		if err := o.Set("task", legacy.TaskMetadata{}); err != nil {
			return LegacyCall{}, err
		}
	}
	call.Params = o.Bytes()
	return call, nil
}

// CallKind classifies an upstream result to a forwarded request.
type CallKind int

const (
	// CallComplete: a final result (resultType "complete" or missing, M-04).
	CallComplete CallKind = iota + 1
	// CallTask: a flat CreateTaskResult (only on tools/call, M-21, M-22).
	CallTask
	// CallInputRequired: an MRTR InputRequiredResult; ask the client and
	// retry with MRTRRetryParams (M-17, M-18).
	CallInputRequired
)

func (k CallKind) String() string {
	switch k {
	case CallComplete:
		return "complete"
	case CallTask:
		return "task"
	case CallInputRequired:
		return "input_required"
	}
	return "invalid"
}

// ClassifyUpstreamResult classifies a modern upstream's result to method.
// The bridge always declares the tasks extension (M-20), so "task" is
// acceptable — but only on a task-capable method (tools/call today; the set is
// modern.TaskCapable's, ready to grow, M-23), else the result is invalid
// (M-22). A missing resultType means "complete"; an unknown one is invalid
// (M-04). Invalid results are -32603 for the client (L-66).
//
// Implements M-04, M-21, M-22, M-23.
func ClassifyUpstreamResult(method string, raw []byte) (CallKind, error) {
	rt, err := modern.ClassifyResultFor(method, raw, true)
	if err != nil {
		return 0, upstreamErr(method+" result", err)
	}
	switch rt {
	case modern.ResultComplete:
		return CallComplete, nil
	case modern.ResultTask:
		return CallTask, nil
	case modern.ResultInputRequired:
		return CallInputRequired, nil
	}
	return 0, internalErr("upstream %s result has unsupported resultType %q", method, rt)
}

// MRTRRetryParams builds the params of the retry of an MRTR request once the
// client has answered: the original (upstream-ready) params, the answers as
// inputResponses and the upstream's requestState echoed byte for byte (absent
// when it sent none). Every key of inputRequests must be answered first
// (M-17); answers for keys it did not ask are dropped. The caller sends the
// retry under a new JSON-RPC id (M-03).
//
// Implements M-17, M-18.
func MRTRRetryParams(original []byte, inputRequired []byte, answers modern.InputResponses) (json.RawMessage, error) {
	ir, err := modern.DecodeInputRequiredResult(inputRequired)
	if err != nil {
		return nil, upstreamErr("input_required result", err)
	}
	resp := modern.InputResponses{}
	for _, k := range ir.InputRequests.Keys() {
		a, ok := answers[k]
		if !ok {
			return nil, internalErr("input request %q has no answer yet; every requested input must be built before retrying (M-17)", k)
		}
		resp[k] = a
	}
	return modern.RetryParams(original, resp, ir.RequestState)
}
