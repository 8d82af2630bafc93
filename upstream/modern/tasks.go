package modernup

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Discover sends server/discover (M-36) and decodes the DiscoverResult.
func (c *Client) Discover(ctx context.Context, opts CallOptions) (*modern.DiscoverResult, error) {
	raw, err := c.call(ctx, modern.MethodDiscover, nil, &opts)
	if err != nil {
		return nil, err
	}
	d, err := modern.DecodeDiscoverResult(raw)
	if err != nil {
		return nil, c.badResponse(modern.MethodDiscover, rpc.As(err).Message, err)
	}
	return &d, nil
}

// ToolOutcome is the classified answer to tools/call (M-21): exactly one of a
// complete CallToolResult, a task, or an MRTR input request.
type ToolOutcome struct {
	// Type is complete, task or input_required (M-04: a missing resultType is
	// complete; anything else was rejected as ErrBadResponse).
	Type modern.ResultType
	// Raw is the result exactly as the upstream sent it.
	Raw json.RawMessage
	// Task is the flat CreateTaskResult when Type is "task".
	Task *modern.CreateTaskResult
	// Input is the MRTR InputRequiredResult when Type is "input_required":
	// fulfil every request, then retry with modern.RetryParams (new id,
	// requestState echoed byte-for-byte, M-17, M-18).
	Input *modern.InputRequiredResult
}

// CallTool sends tools/call with the tasks extension declared and classifies
// the answer (M-20, M-21). params is the tools/call params object
// ({name, arguments, inputResponses?, requestState?}); a legacy "task" field
// must already be stripped by the caller (M-34).
func (c *Client) CallTool(ctx context.Context, params json.RawMessage, opts CallOptions) (*ToolOutcome, error) {
	raw, err := c.call(ctx, modern.MethodToolsCall, params, &opts)
	if err != nil {
		return nil, err
	}
	rt, err := modern.ClassifyResultFor(modern.MethodToolsCall, raw, true)
	if err != nil {
		return nil, c.badResponse(modern.MethodToolsCall, rpc.As(err).Message, err)
	}
	out := &ToolOutcome{Type: rt, Raw: raw}
	switch rt {
	case modern.ResultTask:
		t, err := modern.DecodeCreateTaskResult(raw)
		if err != nil {
			return nil, c.badResponse(modern.MethodToolsCall, rpc.As(err).Message, err)
		}
		out.Task = &t
	case modern.ResultInputRequired:
		in, err := modern.DecodeInputRequiredResult(raw)
		if err != nil {
			return nil, c.badResponse(modern.MethodToolsCall, rpc.As(err).Message, err)
		}
		out.Input = &in
	}
	return out, nil
}

// taskParams is {"taskId": id}.
func taskParams(taskID string) (json.RawMessage, error) {
	if taskID == "" {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "upstream: empty taskId")
	}
	return modern.TaskIDParams{TaskID: taskID}.MarshalJSON()
}

// GetTask sends tasks/get (Mcp-Name = taskId, M-32) and returns the
// DetailedTask. An unknown or expired task is the upstream's -32602 (M-27).
func (c *Client) GetTask(ctx context.Context, taskID string, opts CallOptions) (*modern.DetailedTask, error) {
	params, err := taskParams(taskID)
	if err != nil {
		return nil, err
	}
	raw, err := c.call(ctx, modern.MethodTasksGet, params, &opts)
	if err != nil {
		return nil, err
	}
	g, err := modern.DecodeGetTaskResult(raw)
	if err != nil {
		return nil, c.badResponse(modern.MethodTasksGet, rpc.As(err).Message, err)
	}
	if g.TaskID != taskID {
		return nil, c.badResponse(modern.MethodTasksGet, fmt.Sprintf("asked for one task, got another (taskId %q)", g.TaskID), nil)
	}
	// A copy of the task alone: the result's other _meta keys are not kept
	// with it, and its id is the caller's string (equal, checked above)
	// rather than a second decoded one (see compactTask).
	d := g.DetailedTask
	d.TaskID = taskID
	compactTask(&d)
	return &d, nil
}

// UpdateTask sends tasks/update with inputResponses (keys as the upstream
// named them in inputRequests, M-28, M-30). The answer is only an
// acknowledgement; the task's next state shows up on tasks/get.
func (c *Client) UpdateTask(ctx context.Context, taskID string, responses modern.InputResponses, opts CallOptions) error {
	if len(responses) == 0 {
		return rpc.Errorf(rpc.CodeInvalidParams, "tasks/update: no inputResponses to send")
	}
	params, err := modern.UpdateTaskParams{TaskID: taskID, InputResponses: responses}.MarshalJSON()
	if err != nil {
		return err
	}
	return c.ack(ctx, modern.MethodTasksUpdate, params, &opts)
}

// CancelTask sends tasks/cancel (never notifications/cancelled, M-31). The
// acknowledgement does not mean the task is cancelled (cooperative, M-59).
func (c *Client) CancelTask(ctx context.Context, taskID string, opts CallOptions) error {
	params, err := taskParams(taskID)
	if err != nil {
		return err
	}
	return c.ack(ctx, modern.MethodTasksCancel, params, &opts)
}

func (c *Client) ack(ctx context.Context, method string, params json.RawMessage, opts *CallOptions) error {
	raw, err := c.call(ctx, method, params, opts)
	if err != nil {
		return err
	}
	if _, err := modern.DecodeEmptyResult(raw); err != nil {
		return c.badResponse(method, rpc.As(err).Message, err)
	}
	return nil
}

// TaskSource binds a Client and per-request options to the task methods a
// task watcher needs (runtime/watch.Source and watch.Pusher): the face
// creates one per task with the options of the principal that owns it.
type TaskSource struct {
	Client *Client
	Opts   CallOptions
}

// GetTask is Client.GetTask with the bound options.
func (s TaskSource) GetTask(ctx context.Context, taskID string) (*modern.DetailedTask, error) {
	return s.Client.GetTask(ctx, taskID, s.Opts)
}

// UpdateTask is Client.UpdateTask with the bound options.
func (s TaskSource) UpdateTask(ctx context.Context, taskID string, responses modern.InputResponses) error {
	return s.Client.UpdateTask(ctx, taskID, responses, s.Opts)
}

// ListenTasks opens notifications/tasks for taskIDs and returns the channel
// of task states (closed when the subscription ends, including when ctx
// ends) and the acknowledged task ids.
func (s TaskSource) ListenTasks(ctx context.Context, taskIDs []string) (<-chan *modern.DetailedTask, []string, error) {
	ts, err := s.Client.ListenTasks(ctx, taskIDs, s.Opts)
	if err != nil {
		return nil, nil, err
	}
	return ts.Tasks, ts.Acked, nil
}
