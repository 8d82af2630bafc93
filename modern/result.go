package modern

import (
	"encoding/json"
	"fmt"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// ResultType is the resultType discriminator every 2026-07-28 result carries (M-41).
type ResultType string

// Known result types: two from the core, one from the tasks extension.
const (
	ResultComplete      ResultType = "complete"
	ResultInputRequired ResultType = "input_required"
	// ResultTask is reserved by io.modelcontextprotocol/tasks for CreateTaskResult (M-52, M-68).
	ResultTask ResultType = "task"
)

// ClassifyResult reads the resultType of a raw result (M-04):
//   - missing → "complete" (results of earlier protocol versions);
//   - "complete" and "input_required" are core values;
//   - "task" is valid only when the tasks extension was declared on the
//     request this result answers (tasksNegotiated);
//   - anything else, or a non-string, is an invalid result (-32602).
//
// A raw result that is not JSON is -32700; one that is not an object is -32602.
func ClassifyResult(raw []byte, tasksNegotiated bool) (ResultType, error) {
	r, err := topReader("result", raw)
	if err != nil {
		return "", err
	}
	return classify(r, tasksNegotiated)
}

func classify(r *reader, tasksNegotiated bool) (ResultType, error) {
	s, ok, err := r.str("resultType")
	if err != nil {
		return "", err
	}
	if !ok {
		return ResultComplete, nil
	}
	switch rt := ResultType(s); rt {
	case ResultComplete, ResultInputRequired:
		return rt, nil
	case ResultTask:
		if !tasksNegotiated {
			return "", rpc.Errorf(rpc.CodeInvalidParams,
				`Invalid result: resultType "task" is only valid when the request declared the %s extension (M-04, M-50)`, TasksExtensionID)
		}
		return rt, nil
	}
	return "", rpc.Errorf(rpc.CodeInvalidParams,
		"Invalid result: unrecognised resultType %s (known: \"complete\", \"input_required\" and, with the %s extension, \"task\") (M-04)",
		quoteShort(s), TasksExtensionID)
}

// ClassifyResultFor is ClassifyResult plus the per-method rules: only
// tools/call may yield "task" (M-22, M-52), and only tools/call, prompts/get
// and resources/read may yield "input_required" (M-48).
func ClassifyResultFor(method string, raw []byte, tasksNegotiated bool) (ResultType, error) {
	rt, err := ClassifyResult(raw, tasksNegotiated)
	if err != nil {
		return "", err
	}
	switch rt {
	case ResultTask:
		if !TaskCapable(method) {
			return "", rpc.Errorf(rpc.CodeInvalidParams,
				`Invalid result: resultType "task" is not allowed in reply to %s (only tools/call can create tasks) (M-22)`, method)
		}
	case ResultInputRequired:
		if !MRTRCapable(method) {
			return "", rpc.Errorf(rpc.CodeInvalidParams,
				`Invalid result: resultType "input_required" is not allowed in reply to %s (only tools/call, prompts/get and resources/read) (M-48)`, method)
		}
	}
	return rt, nil
}

// TaskCapable reports whether a request method may be answered with a
// CreateTaskResult. Only tools/call today (M-52); SEP-2663 expects more later (M-23).
func TaskCapable(method string) bool { return method == MethodToolsCall }

// MRTRCapable reports whether a request method may be answered with
// input_required (M-48).
func MRTRCapable(method string) bool {
	return method == MethodToolsCall || method == MethodPromptsGet || method == MethodResourcesRead
}

// readResultType checks a decoded result's resultType against the values the
// type accepts ("" in accept admits a missing resultType).
func readResultType(r *reader, accept ...ResultType) error {
	s, ok, err := r.str("resultType")
	if err != nil {
		return err
	}
	for _, a := range accept {
		if (a == "" && !ok) || (ok && ResultType(s) == a) {
			return nil
		}
	}
	if !ok {
		return r.fail("resultType", "is missing; want %s", wantList(accept))
	}
	return r.fail("resultType", "is %s; want %s", quoteShort(s), wantList(accept))
}

func wantList(accept []ResultType) string {
	out := ""
	for _, a := range accept {
		if a == "" {
			continue
		}
		if out != "" {
			out += " or "
		}
		out += fmt.Sprintf("%q", string(a))
	}
	return out
}

// EmptyResult is the acknowledgement {"resultType":"complete"} of
// tasks/update and tasks/cancel (M-58, M-59), with optional _meta.
type EmptyResult struct {
	Meta Object
}

// UpdateTaskResult is the acknowledgement of tasks/update.
type UpdateTaskResult = EmptyResult

// CancelTaskResult is the acknowledgement of tasks/cancel.
type CancelTaskResult = EmptyResult

// DecodeEmptyResult decodes an acknowledgement leniently: resultType missing
// or "complete"; other fields are ignored.
func DecodeEmptyResult(data []byte) (EmptyResult, error) {
	r, err := topReader("acknowledgement result", data)
	if err != nil {
		return EmptyResult{}, err
	}
	if err := readResultType(r, "", ResultComplete); err != nil {
		return EmptyResult{}, err
	}
	meta, err := r.object("_meta")
	if err != nil {
		return EmptyResult{}, err
	}
	return EmptyResult{Meta: meta}, nil
}

// MarshalJSON encodes {"resultType":"complete"} (plus _meta when set).
func (e EmptyResult) MarshalJSON() ([]byte, error) {
	w := newWriter()
	w.field("resultType", ResultComplete)
	if e.Meta != nil {
		w.field("_meta", e.Meta)
	}
	return w.bytes()
}

// UnmarshalJSON decodes leniently.
func (e *EmptyResult) UnmarshalJSON(data []byte) error {
	return decodeInto(e, DecodeEmptyResult, data)
}

// ServerInfoOf reads _meta["io.modelcontextprotocol/serverInfo"] of a result's
// _meta (M-41). Display only: never base behaviour on it (M-16).
func ServerInfoOf(meta Object) (Implementation, bool) {
	v, ok := meta[MetaKeyServerInfo]
	if !ok || isNull(v) {
		return Implementation{}, false
	}
	im, err := DecodeImplementation(v)
	if err != nil {
		return Implementation{}, false
	}
	return im, true
}

// WithServerInfo returns a copy of meta with serverInfo set (M-41).
func WithServerInfo(meta Object, info Implementation) (Object, error) {
	b, err := info.MarshalJSON()
	if err != nil {
		return nil, err
	}
	out := meta.Clone()
	if out == nil {
		out = Object{}
	}
	out[MetaKeyServerInfo] = json.RawMessage(b)
	return out, nil
}
