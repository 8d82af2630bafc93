package modern

import (
	"encoding/json"
)

// TaskIDParams are the params of tasks/get and tasks/cancel: {taskId, _meta}.
// On Streamable HTTP the request also needs Mcp-Name: <taskId> (M-32).
type TaskIDParams struct {
	TaskID string
	// Meta is params._meta; nil = absent (stamp it with StampRequestMeta or set
	// it here; tasks/* must declare the extension, M-20).
	Meta *RequestMeta
	// Extra keeps unknown params fields.
	Extra map[string]json.RawMessage
}

// GetTaskParams are the params of tasks/get.
type GetTaskParams = TaskIDParams

// CancelTaskParams are the params of tasks/cancel.
type CancelTaskParams = TaskIDParams

// DecodeGetTaskParams decodes tasks/get params; taskId is required.
func DecodeGetTaskParams(params []byte) (GetTaskParams, error) {
	return decodeTaskIDParams(MethodTasksGet+" params", params)
}

// DecodeCancelTaskParams decodes tasks/cancel params; taskId is required.
func DecodeCancelTaskParams(params []byte) (CancelTaskParams, error) {
	return decodeTaskIDParams(MethodTasksCancel+" params", params)
}

func decodeTaskIDParams(ctx string, params []byte) (TaskIDParams, error) {
	if isNull(params) {
		return TaskIDParams{}, invalidParams(ctx, "missing required field %q", "taskId")
	}
	r, err := topReader(ctx, params)
	if err != nil {
		return TaskIDParams{}, err
	}
	var p TaskIDParams
	if p.TaskID, err = r.reqStr("taskId"); err != nil {
		return p, err
	}
	if p.Meta, err = readMetaPtr(r); err != nil {
		return p, err
	}
	p.Extra = r.rest("taskId", "_meta")
	return p, nil
}

func readMetaPtr(r *reader) (*RequestMeta, error) {
	if !r.has("_meta") {
		return nil, nil
	}
	m, err := readMetaField(r)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// MarshalJSON encodes {taskId, _meta?}.
func (p TaskIDParams) MarshalJSON() ([]byte, error) {
	if p.TaskID == "" {
		return nil, encodeErr("task params: taskId is required")
	}
	w := newWriter()
	w.field("taskId", p.TaskID)
	w.extra(p.Extra)
	if p.Meta != nil {
		w.field("_meta", *p.Meta)
	}
	return w.bytes()
}

// UnmarshalJSON decodes leniently.
func (p *TaskIDParams) UnmarshalJSON(data []byte) error {
	return decodeInto(p, func(b []byte) (TaskIDParams, error) { return decodeTaskIDParams("task params", b) }, data)
}

// UpdateTaskParams are the params of tasks/update (M-28, M-58): the answers to a
// task's outstanding input requests, under the same keys (M-28, M-30).
type UpdateTaskParams struct {
	TaskID         string
	InputResponses InputResponses
	Meta           *RequestMeta
	Extra          map[string]json.RawMessage
}

// DecodeUpdateTaskParams decodes tasks/update params; taskId and
// inputResponses are required.
func DecodeUpdateTaskParams(params []byte) (UpdateTaskParams, error) {
	const ctx = MethodTasksUpdate + " params"
	if isNull(params) {
		return UpdateTaskParams{}, invalidParams(ctx, "missing required field %q", "taskId")
	}
	r, err := topReader(ctx, params)
	if err != nil {
		return UpdateTaskParams{}, err
	}
	var p UpdateTaskParams
	if p.TaskID, err = r.reqStr("taskId"); err != nil {
		return p, err
	}
	if !r.has("inputResponses") {
		return p, r.missing("inputResponses")
	}
	c, err := r.child("inputResponses")
	if err != nil {
		return p, err
	}
	if p.InputResponses, err = readInputResponses(c); err != nil {
		return p, err
	}
	if p.Meta, err = readMetaPtr(r); err != nil {
		return p, err
	}
	p.Extra = r.rest("taskId", "inputResponses", "_meta")
	return p, nil
}

// MarshalJSON encodes {taskId, inputResponses, _meta?} strictly.
func (p UpdateTaskParams) MarshalJSON() ([]byte, error) {
	if p.TaskID == "" {
		return nil, encodeErr("tasks/update params: taskId is required")
	}
	if p.InputResponses == nil {
		return nil, encodeErr("tasks/update params: inputResponses is required")
	}
	w := newWriter()
	w.field("taskId", p.TaskID)
	w.field("inputResponses", p.InputResponses)
	w.extra(p.Extra)
	if p.Meta != nil {
		w.field("_meta", *p.Meta)
	}
	return w.bytes()
}

// UnmarshalJSON decodes leniently.
func (p *UpdateTaskParams) UnmarshalJSON(data []byte) error {
	return decodeInto(p, DecodeUpdateTaskParams, data)
}

// Names of the schema ($defs GetTaskRequest, UpdateTaskRequest,
// CancelTaskRequest) for the params types; the JSON-RPC envelope around them is
// built with EncodeRequest.
type (
	GetTaskRequest    = GetTaskParams
	UpdateTaskRequest = UpdateTaskParams
	CancelTaskRequest = CancelTaskParams
)
