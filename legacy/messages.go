package legacy

import (
	"encoding/json"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// ---- CreateTaskResult ----------------------------------------------------

// CreateTaskResult answers an accepted task-augmented request (L-12): the Task
// nested under "task" (unlike the flat tasks/get result), never the operation
// result.
type CreateTaskResult struct {
	Task Task
	// Meta may carry ModelImmediateResponseKey (L-23); see
	// Meta.SetModelImmediateResponse. Related-task meta is best omitted here.
	Meta Meta
}

type createTaskWire struct {
	Task taskWire `json:"task"`
	Meta Meta     `json:"_meta,omitempty"`
}

// Validate checks the nested Task and the known _meta keys. It does not insist
// on status working (L-17): a bridge may answer with a task that is already
// terminal when the upstream finished synchronously.
func (r CreateTaskResult) Validate() error {
	if err := r.Task.validate("CreateTaskResult.task"); err != nil {
		return err
	}
	return r.Meta.validate("CreateTaskResult")
}

// MarshalJSON validates r and encodes {"task": {...}, "_meta"?: {...}}.
func (r CreateTaskResult) MarshalJSON() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(createTaskWire{Task: r.Task.wire(nil), Meta: r.Meta})
}

// UnmarshalJSON decodes like DecodeCreateTaskResult.
func (r *CreateTaskResult) UnmarshalJSON(data []byte) error {
	return assign(r, data, DecodeCreateTaskResult)
}

// DecodeCreateTaskResult decodes a CreateTaskResult; "task" is required and
// must be a full Task.
func DecodeCreateTaskResult(data []byte) (CreateTaskResult, error) {
	f, err := openObject(data, "CreateTaskResult", rpc.CodeInvalidParams)
	if err != nil {
		return CreateTaskResult{}, err
	}
	v, ok := f.get("task")
	if !ok {
		return CreateTaskResult{}, f.errf("task", "is required (the created Task)")
	}
	return createdFrom(f, v)
}

// IsCreateTaskResult reports whether a raw result to a task-augmented request
// is a CreateTaskResult (it has an object "task") rather than the plain
// operation result a receiver returns when it ignored the opt-in (L-05).
func IsCreateTaskResult(result json.RawMessage) bool {
	ms, err := objectMembers(result, "result", rpc.CodeInvalidParams)
	if err != nil {
		return false
	}
	v, ok := rawjson.Lookup(ms, "task")
	return ok && rawjson.Kind(v) == "an object"
}

// ---- params of tasks/get, tasks/result, tasks/cancel ----------------------

// GetTaskParams are the params of tasks/get.
type GetTaskParams struct {
	TaskID string
	// Meta is kept for forwarding; any related-task entry in it is ignored,
	// params.taskId is the source of truth (L-37).
	Meta Meta
}

// GetTaskPayloadParams are the params of tasks/result.
type GetTaskPayloadParams struct {
	TaskID string
	Meta   Meta // see GetTaskParams.Meta
}

// CancelTaskParams are the params of tasks/cancel.
type CancelTaskParams struct {
	TaskID string
	Meta   Meta // see GetTaskParams.Meta
}

type taskIDWire struct {
	TaskID string `json:"taskId"`
	Meta   Meta   `json:"_meta,omitempty"`
}

func validateTaskIDParams(what, id string, meta Meta) error {
	if id == "" {
		return InternalError("%s: taskId must not be empty", what)
	}
	return meta.validate(what)
}

func decodeTaskIDParams(data []byte, method string) (string, Meta, error) {
	what := method + " params"
	if rawjson.IsAbsent(data) {
		return "", nil, InvalidParamsError("%s: params are required ({\"taskId\": \"...\"})", what)
	}
	f, err := openObject(data, what, rpc.CodeInvalidParams)
	if err != nil {
		return "", nil, err
	}
	id, err := f.taskID()
	if err != nil {
		return "", nil, err
	}
	meta, err := f.meta()
	if err != nil {
		return "", nil, err
	}
	return id, meta, nil
}

// Validate checks that TaskID is set.
func (p GetTaskParams) Validate() error {
	return validateTaskIDParams(MethodTasksGet+" params", p.TaskID, p.Meta)
}

// MarshalJSON validates p and encodes {"taskId": ...}.
func (p GetTaskParams) MarshalJSON() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(taskIDWire(p))
}

// UnmarshalJSON decodes like DecodeGetTaskParams.
func (p *GetTaskParams) UnmarshalJSON(data []byte) error {
	return assign(p, data, DecodeGetTaskParams)
}

// DecodeGetTaskParams decodes tasks/get params; taskId is a required,
// non-empty string (L-38).
func DecodeGetTaskParams(data []byte) (GetTaskParams, error) {
	id, meta, err := decodeTaskIDParams(data, MethodTasksGet)
	return GetTaskParams{TaskID: id, Meta: meta}, err
}

// Validate checks that TaskID is set.
func (p GetTaskPayloadParams) Validate() error {
	return validateTaskIDParams(MethodTasksResult+" params", p.TaskID, p.Meta)
}

// MarshalJSON validates p and encodes {"taskId": ...}.
func (p GetTaskPayloadParams) MarshalJSON() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(taskIDWire(p))
}

// UnmarshalJSON decodes like DecodeGetTaskPayloadParams.
func (p *GetTaskPayloadParams) UnmarshalJSON(data []byte) error {
	return assign(p, data, DecodeGetTaskPayloadParams)
}

// DecodeGetTaskPayloadParams decodes tasks/result params (L-45).
func DecodeGetTaskPayloadParams(data []byte) (GetTaskPayloadParams, error) {
	id, meta, err := decodeTaskIDParams(data, MethodTasksResult)
	return GetTaskPayloadParams{TaskID: id, Meta: meta}, err
}

// Validate checks that TaskID is set.
func (p CancelTaskParams) Validate() error {
	return validateTaskIDParams(MethodTasksCancel+" params", p.TaskID, p.Meta)
}

// MarshalJSON validates p and encodes {"taskId": ...}.
func (p CancelTaskParams) MarshalJSON() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(taskIDWire(p))
}

// UnmarshalJSON decodes like DecodeCancelTaskParams.
func (p *CancelTaskParams) UnmarshalJSON(data []byte) error {
	return assign(p, data, DecodeCancelTaskParams)
}

// DecodeCancelTaskParams decodes tasks/cancel params (L-56).
func DecodeCancelTaskParams(data []byte) (CancelTaskParams, error) {
	id, meta, err := decodeTaskIDParams(data, MethodTasksCancel)
	return CancelTaskParams{TaskID: id, Meta: meta}, err
}

// ---- flat "Result & Task" results ---------------------------------------

// GetTaskResult is the tasks/get result: the flat Task (L-39), no "task"
// wrapper. Meta should not carry related-task metadata (L-35).
type GetTaskResult struct {
	Task Task
	Meta Meta
}

// CancelTaskResult is the tasks/cancel result: the flat Task after
// cancellation (L-58).
type CancelTaskResult struct {
	Task Task
	Meta Meta
}

// TaskStatusNotificationParams are the params of notifications/tasks/status:
// the full Task (L-61). Meta should not carry related-task metadata (L-36).
type TaskStatusNotificationParams struct {
	Task Task
	Meta Meta
}

func decodeFlatTask(data []byte, what string) (Task, Meta, error) {
	f, err := openObject(data, what, rpc.CodeInvalidParams)
	if err != nil {
		return Task{}, nil, err
	}
	t, err := decodeTaskFields(f)
	if err != nil {
		return Task{}, nil, err
	}
	meta, err := f.meta()
	if err != nil {
		return Task{}, nil, err
	}
	return t, meta, nil
}

func validateFlat(what string, t Task, meta Meta) error {
	if err := t.validate(what); err != nil {
		return err
	}
	return meta.validate(what)
}

// Validate checks the Task and the known _meta keys.
func (r GetTaskResult) Validate() error { return validateFlat("GetTaskResult", r.Task, r.Meta) }

// MarshalJSON validates r and encodes the flat Task plus _meta.
func (r GetTaskResult) MarshalJSON() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(r.Task.wire(r.Meta))
}

// UnmarshalJSON decodes like DecodeGetTaskResult.
func (r *GetTaskResult) UnmarshalJSON(data []byte) error {
	return assign(r, data, DecodeGetTaskResult)
}

// DecodeGetTaskResult decodes a tasks/get result.
func DecodeGetTaskResult(data []byte) (GetTaskResult, error) {
	t, m, err := decodeFlatTask(data, "tasks/get result")
	return GetTaskResult{Task: t, Meta: m}, err
}

// Validate checks the Task, that its status is cancelled (L-58: the task
// moves to cancelled before the reply) and the known _meta keys.
func (r CancelTaskResult) Validate() error {
	if err := validateFlat("CancelTaskResult", r.Task, r.Meta); err != nil {
		return err
	}
	if r.Task.Status != StatusCancelled {
		return InternalError("CancelTaskResult: status must be cancelled, got %q (L-58)", r.Task.Status)
	}
	return nil
}

// MarshalJSON validates r and encodes the flat Task plus _meta.
func (r CancelTaskResult) MarshalJSON() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(r.Task.wire(r.Meta))
}

// UnmarshalJSON decodes like DecodeCancelTaskResult.
func (r *CancelTaskResult) UnmarshalJSON(data []byte) error {
	return assign(r, data, DecodeCancelTaskResult)
}

// DecodeCancelTaskResult decodes a tasks/cancel result. It accepts any status
// (lenient); Validate insists on cancelled.
func DecodeCancelTaskResult(data []byte) (CancelTaskResult, error) {
	t, m, err := decodeFlatTask(data, "tasks/cancel result")
	return CancelTaskResult{Task: t, Meta: m}, err
}

// Validate checks the Task and the known _meta keys.
func (p TaskStatusNotificationParams) Validate() error {
	return validateFlat("notifications/tasks/status params", p.Task, p.Meta)
}

// MarshalJSON validates p and encodes the flat Task plus _meta.
func (p TaskStatusNotificationParams) MarshalJSON() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(p.Task.wire(p.Meta))
}

// UnmarshalJSON decodes like DecodeTaskStatusNotificationParams.
func (p *TaskStatusNotificationParams) UnmarshalJSON(data []byte) error {
	return assign(p, data, DecodeTaskStatusNotificationParams)
}

// DecodeTaskStatusNotificationParams decodes notifications/tasks/status params.
func DecodeTaskStatusNotificationParams(data []byte) (TaskStatusNotificationParams, error) {
	t, m, err := decodeFlatTask(data, "notifications/tasks/status params")
	return TaskStatusNotificationParams{Task: t, Meta: m}, err
}

// ---- tasks/list ------------------------------------------------------------

// ListTasksParams are the optional params of tasks/list. The params object
// may be missing entirely (TS clients send none without a cursor).
type ListTasksParams struct {
	Cursor string // "" = first page
	Meta   Meta
}

type listParamsWire struct {
	Cursor string `json:"cursor,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// Validate checks the known _meta keys.
func (p ListTasksParams) Validate() error { return p.Meta.validate("tasks/list params") }

// MarshalJSON validates p and encodes it ({} on the first page).
func (p ListTasksParams) MarshalJSON() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(listParamsWire(p))
}

// UnmarshalJSON decodes like DecodeListTasksParams.
func (p *ListTasksParams) UnmarshalJSON(data []byte) error {
	return assign(p, data, DecodeListTasksParams)
}

// DecodeListTasksParams decodes tasks/list params. No bytes or null mean
// "first page"; cursor, when present, must be a string.
func DecodeListTasksParams(data []byte) (ListTasksParams, error) {
	if rawjson.IsAbsent(data) {
		return ListTasksParams{}, nil
	}
	f, err := openObject(data, "tasks/list params", rpc.CodeInvalidParams)
	if err != nil {
		return ListTasksParams{}, err
	}
	c, _, err := f.str("cursor", false)
	if err != nil {
		return ListTasksParams{}, err
	}
	meta, err := f.meta()
	if err != nil {
		return ListTasksParams{}, err
	}
	return ListTasksParams{Cursor: c, Meta: meta}, nil
}

// ListTasksResult is the tasks/list result. NextCursor must be set whenever
// more tasks exist (L-50); "" marks the last page.
type ListTasksResult struct {
	Tasks      []Task
	NextCursor string
	Meta       Meta
}

type listResultWire struct {
	Tasks      []taskWire `json:"tasks"`
	NextCursor string     `json:"nextCursor,omitempty"`
	Meta       Meta       `json:"_meta,omitempty"`
}

// Validate checks every Task and the known _meta keys.
func (r ListTasksResult) Validate() error {
	for i, t := range r.Tasks {
		if err := t.validate("ListTasksResult.tasks[" + itoa(i) + "]"); err != nil {
			return err
		}
	}
	return r.Meta.validate("ListTasksResult")
}

// MarshalJSON validates r and encodes it; a nil Tasks encodes as [].
func (r ListTasksResult) MarshalJSON() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	w := listResultWire{Tasks: make([]taskWire, len(r.Tasks)), NextCursor: r.NextCursor, Meta: r.Meta}
	for i, t := range r.Tasks {
		w.Tasks[i] = t.wire(nil)
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes like DecodeListTasksResult.
func (r *ListTasksResult) UnmarshalJSON(data []byte) error {
	return assign(r, data, DecodeListTasksResult)
}

// DecodeListTasksResult decodes a tasks/list result; "tasks" is required.
func DecodeListTasksResult(data []byte) (ListTasksResult, error) {
	f, err := openObject(data, "tasks/list result", rpc.CodeInvalidParams)
	if err != nil {
		return ListTasksResult{}, err
	}
	v, ok := f.get("tasks")
	if !ok || rawjson.IsNull(v) {
		return ListTasksResult{}, f.errf("tasks", "is required (an array of Task)")
	}
	if rawjson.Kind(v) != "an array" {
		return ListTasksResult{}, f.errf("tasks", "must be an array, got %s", rawjson.Kind(v))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return ListTasksResult{}, f.errf("tasks", "is not a valid array")
	}
	r := ListTasksResult{Tasks: make([]Task, 0, len(items))}
	for i, item := range items {
		tf, err := f.sub("tasks["+itoa(i)+"]", item)
		if err != nil {
			return ListTasksResult{}, err
		}
		t, err := decodeTaskFields(tf)
		if err != nil {
			return ListTasksResult{}, err
		}
		r.Tasks = append(r.Tasks, t)
	}
	if r.NextCursor, _, err = f.str("nextCursor", false); err != nil {
		return ListTasksResult{}, err
	}
	if r.Meta, err = f.meta(); err != nil {
		return ListTasksResult{}, err
	}
	return r, nil
}

// ---- tasks/result ----------------------------------------------------------

// GetTaskPayloadResult is the tasks/result result: exactly what the underlying
// request returned (a CallToolResult for tools/call, L-43, L-44), plus
// _meta[RelatedTaskKey] (L-34). It is kept raw so nothing of the underlying
// result is lost.
type GetTaskPayloadResult struct {
	Raw json.RawMessage
}

// NewGetTaskPayloadResult builds the tasks/result result from the underlying
// request's raw result: every member, including existing _meta keys, is kept
// and _meta[RelatedTaskKey] = {"taskId": taskID} is merged in (L-34).
func NewGetTaskPayloadResult(underlying json.RawMessage, taskID string) (GetTaskPayloadResult, error) {
	if rawjson.IsAbsent(underlying) {
		return GetTaskPayloadResult{}, InternalError("tasks/result: the underlying result is missing")
	}
	raw, err := SetRelatedTask(underlying, taskID)
	if err != nil {
		return GetTaskPayloadResult{}, err
	}
	return GetTaskPayloadResult{Raw: raw}, nil
}

// RelatedTaskID returns the taskId of the result's related-task _meta.
func (r GetTaskPayloadResult) RelatedTaskID() (string, bool) {
	id, ok, err := RelatedTaskOf(r.Raw)
	return id, ok && err == nil
}

// Validate checks that Raw is a JSON object whose _meta carries a well-formed
// related-task entry (L-34).
func (r GetTaskPayloadResult) Validate() error {
	f, err := openObject(r.Raw, "GetTaskPayloadResult", rpc.CodeInvalidParams)
	if err != nil {
		return InternalError("%s", rpc.As(err).Message)
	}
	meta, err := f.meta()
	if err != nil {
		return InternalError("%s", rpc.As(err).Message)
	}
	if _, ok := meta[RelatedTaskKey]; !ok {
		return InternalError("GetTaskPayloadResult: _meta[%q] is required (L-34)", RelatedTaskKey)
	}
	return meta.validate("GetTaskPayloadResult")
}

// MarshalJSON validates r and returns Raw unchanged.
func (r GetTaskPayloadResult) MarshalJSON() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r.Raw, nil
}

// UnmarshalJSON decodes like DecodeGetTaskPayloadResult.
func (r *GetTaskPayloadResult) UnmarshalJSON(data []byte) error {
	return assign(r, data, DecodeGetTaskPayloadResult)
}

// DecodeGetTaskPayloadResult decodes a tasks/result result leniently: it must
// be an object, and a _meta, when present, must be an object with a
// well-formed related-task entry if it has one. A missing related-task entry
// is tolerated. Raw keeps the input bytes.
func DecodeGetTaskPayloadResult(data []byte) (GetTaskPayloadResult, error) {
	f, err := openObject(data, "tasks/result result", rpc.CodeInvalidParams)
	if err != nil {
		return GetTaskPayloadResult{}, err
	}
	meta, err := f.meta()
	if err != nil {
		return GetTaskPayloadResult{}, err
	}
	if v, ok := meta[RelatedTaskKey]; ok {
		if _, err := decodeRelatedTask(v, "tasks/result result: _meta"); err != nil {
			return GetTaskPayloadResult{}, err
		}
	}
	return GetTaskPayloadResult{Raw: json.RawMessage(append([]byte(nil), data...))}, nil
}

// ---- helpers -----------------------------------------------------------------

// assign runs decode and stores its result in *dst (for UnmarshalJSON).
func assign[T any](dst *T, data []byte, decode func([]byte) (T, error)) error {
	v, err := decode(data)
	if err != nil {
		return err
	}
	*dst = v
	return nil
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}
