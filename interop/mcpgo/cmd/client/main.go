// Command client is a legacy (MCP 2025-11-25 tasks) client test built on
// github.com/mark3labs/mcp-go v1.2.1 (interop/README.md), for tasksbridge's
// interop tests. mcp-go has no typed "call tool as task", so the task is
// created with a raw tools/call carrying params.task through the transport,
// and then driven with the typed GetTask/WaitForTask/TaskResult/ListTasks/
// CancelTask. mcp-go does not implement input_required (no elicit step).
//
// Usage: client [flags] URL   (URL last)
//
//	-steps init,list,task,plain,tasklist,cancel,fail
//	-task-tool NAME -task-args JSON   (likewise plain, cancel, fail)
//	-expect-fail any|error|iserror    -ttl MS    -timeout DURATION
//
// It prints one JSON report on stdout, in the same format as the TypeScript
// legacy-client.mjs: {"client","url","ok","steps":[{"name","ok","ms",
// "error"?,"details"}],"error"?}. Exit code 0 only if every selected step
// passed; 1 otherwise; 2 on bad usage.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

var allSteps = []string{"init", "list", "task", "plain", "tasklist", "cancel", "fail"}

type toolSpec struct {
	Name string
	Args map[string]any
}

type config struct {
	url        string
	steps      []string
	tools      map[string]toolSpec
	expectFail string
	ttl        int64
	timeout    time.Duration
}

// Step is one entry of the report.
type Step struct {
	Name    string         `json:"name"`
	OK      bool           `json:"ok"`
	Ms      int64          `json:"ms"`
	Error   string         `json:"error,omitempty"`
	Details map[string]any `json:"details,omitempty"`
}

// Report is what the client prints.
type Report struct {
	Client string `json:"client"`
	URL    string `json:"url"`
	OK     bool   `json:"ok"`
	Steps  []Step `json:"steps"`
	Error  string `json:"error,omitempty"`
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpgo-client: %v\n", err)
		os.Exit(2)
	}
	rep := run(cfg)
	out, err := json.Marshal(rep)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpgo-client: encode report: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(string(out))
	if !rep.OK {
		os.Exit(1)
	}
}

func parseFlags(args []string) (*config, error) {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	steps := fs.String("steps", strings.Join(allSteps, ","), "comma-separated steps")
	expectFail := fs.String("expect-fail", "any", "failure shape the fail step accepts: any, error or iserror")
	ttl := fs.Int64("ttl", 60000, "task ttl in ms sent in params.task")
	timeout := fs.Duration("timeout", 60*time.Second, "overall timeout")
	defaults := map[string]toolSpec{
		"task":   {"slow_required", map[string]any{"ms": 300, "text": "task step"}},
		"plain":  {"slow_task", map[string]any{"ms": 200, "text": "plain step"}},
		"cancel": {"slow_required", map[string]any{"ms": 60000, "text": "cancel step"}},
		"fail":   {"fail_task", map[string]any{"ms": 100, "reason": "fail step"}},
	}
	names, argJSON := map[string]*string{}, map[string]*string{}
	for step, d := range defaults {
		raw, _ := json.Marshal(d.Args)
		names[step] = fs.String(step+"-tool", d.Name, "tool for the "+step+" step")
		argJSON[step] = fs.String(step+"-args", string(raw), "JSON arguments for the "+step+" step")
	}
	// The URL comes last; flags before it.
	if len(args) == 0 {
		return nil, errors.New("missing server URL (last argument)")
	}
	if err := fs.Parse(args[:len(args)-1]); err != nil {
		return nil, err
	}
	if fs.NArg() != 0 {
		return nil, fmt.Errorf("unexpected arguments %v before the URL", fs.Args())
	}
	cfg := &config{url: args[len(args)-1], expectFail: *expectFail, ttl: *ttl, timeout: *timeout, tools: map[string]toolSpec{}}
	if strings.HasPrefix(cfg.url, "-") {
		return nil, fmt.Errorf("missing server URL (last argument), got %q", cfg.url)
	}
	for _, s := range strings.Split(*steps, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(allSteps, s) {
			return nil, fmt.Errorf("unknown step %q (mcp-go client knows %s)", s, strings.Join(allSteps, ","))
		}
		cfg.steps = append(cfg.steps, s)
	}
	if !slices.Contains([]string{"any", "error", "iserror"}, cfg.expectFail) {
		return nil, fmt.Errorf("-expect-fail %q: want any, error or iserror", cfg.expectFail)
	}
	for step := range defaults {
		var a map[string]any
		if err := json.Unmarshal([]byte(*argJSON[step]), &a); err != nil {
			return nil, fmt.Errorf("-%s-args: %w", step, err)
		}
		cfg.tools[step] = toolSpec{Name: *names[step], Args: a}
	}
	return cfg, nil
}

type runner struct {
	cfg     *config
	c       *client.Client
	created []string
	nextID  int
}

func run(cfg *config) *Report {
	rep := &Report{Client: "mcp-go@v1.2.1", URL: cfg.url, Steps: []Step{}}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()

	tr, err := transport.NewStreamableHTTP(cfg.url)
	if err != nil {
		rep.Error = fmt.Sprintf("transport: %v", err)
		return rep
	}
	// Pinning 2025-11-25 keeps mcp-go on the initialize handshake: by default
	// it probes server/discover (2026-07-28) first.
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	defer c.Close()
	r := &runner{cfg: cfg, c: c}

	initialized := false
	for _, name := range cfg.steps {
		st := Step{Name: name}
		start := time.Now()
		var details map[string]any
		var err error
		if name != "init" && !initialized {
			if _, ierr := r.init(ctx); ierr != nil {
				st.Error = fmt.Sprintf("connect: %v", ierr)
				rep.Steps = append(rep.Steps, st)
				continue
			}
			initialized = true
		}
		switch name {
		case "init":
			details, err = r.init(ctx)
			initialized = err == nil
		case "list":
			details, err = r.list(ctx)
		case "task":
			details, err = r.task(ctx)
		case "plain":
			details, err = r.plain(ctx)
		case "tasklist":
			details, err = r.tasklist(ctx)
		case "cancel":
			details, err = r.cancel(ctx)
		case "fail":
			details, err = r.fail(ctx)
		}
		st.Ms = time.Since(start).Milliseconds()
		st.Details = details
		if err != nil {
			st.Error = err.Error()
		} else {
			st.OK = true
		}
		rep.Steps = append(rep.Steps, st)
	}
	if ctx.Err() != nil {
		rep.Error = fmt.Sprintf("overall timeout after %v", cfg.timeout)
	}
	rep.OK = rep.Error == "" && len(rep.Steps) == len(cfg.steps)
	for _, s := range rep.Steps {
		rep.OK = rep.OK && s.OK
	}
	return rep
}

func (r *runner) init(ctx context.Context) (map[string]any, error) {
	if r.c.IsInitialized() {
		return nil, errors.New("already initialized")
	}
	if err := r.c.Start(ctx); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	req.Params.ClientInfo = mcp.Implementation{Name: "tasksbridge-mcpgo-client", Version: "1.0.0"}
	res, err := r.c.Initialize(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	d := map[string]any{
		"protocolVersion": res.ProtocolVersion,
		"server":          res.ServerInfo,
		"tasks":           res.Capabilities.Tasks,
		"sessionId":       r.c.GetSessionId(),
	}
	if res.ProtocolVersion != mcp.ProtocolVersion20251125 {
		return d, fmt.Errorf("negotiated protocol %s, want %s", res.ProtocolVersion, mcp.ProtocolVersion20251125)
	}
	if res.Capabilities.Tasks == nil {
		return d, errors.New("server did not declare capabilities.tasks")
	}
	return d, nil
}

func (r *runner) list(ctx context.Context) (map[string]any, error) {
	res, err := r.c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return nil, fmt.Errorf("tools/list: %w", err)
	}
	support := map[string]any{}
	for _, t := range res.Tools {
		var ts any
		if t.Execution != nil {
			ts = t.Execution.TaskSupport
		}
		support[t.Name] = ts
	}
	d := map[string]any{"taskSupport": support}
	var missing []string
	for _, s := range r.cfg.steps {
		if spec, ok := r.cfg.tools[s]; ok {
			if _, ok := support[spec.Name]; !ok && !slices.Contains(missing, spec.Name) {
				missing = append(missing, spec.Name)
			}
		}
	}
	if len(missing) > 0 {
		return d, fmt.Errorf("tools/list lacks %s", strings.Join(missing, ", "))
	}
	return d, nil
}

// createTask sends tools/call with params.task through the raw transport and
// decodes the CreateTaskResult.
func (r *runner) createTask(ctx context.Context, spec toolSpec) (*mcp.Task, error) {
	r.nextID++
	ttl := r.cfg.ttl
	resp, err := r.c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		// A string id cannot collide with the client's own numeric ids.
		ID:     mcp.NewRequestId(fmt.Sprintf("task-call-%d", r.nextID)),
		Method: string(mcp.MethodToolsCall),
		Params: mcp.CallToolParams{Name: spec.Name, Arguments: spec.Args, Task: &mcp.TaskParams{TTL: &ttl}},
	})
	if err != nil {
		return nil, fmt.Errorf("tools/call %s with task: %w", spec.Name, err)
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("tools/call %s with task: JSON-RPC error %d: %s", spec.Name, resp.Error.Code, resp.Error.Message)
	}
	var raw struct {
		Task *json.RawMessage `json:"task"`
	}
	if err := json.Unmarshal(resp.Result, &raw); err != nil || raw.Task == nil {
		return nil, fmt.Errorf("tools/call %s with task: not a CreateTaskResult: %s", spec.Name, resp.Result)
	}
	var task mcp.Task
	if err := json.Unmarshal(*raw.Task, &task); err != nil {
		return nil, fmt.Errorf("decode CreateTaskResult.task: %w", err)
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(*raw.Task, &keys)
	if task.TaskId == "" {
		return nil, errors.New("CreateTaskResult without taskId")
	}
	for _, k := range []string{"ttl", "createdAt", "lastUpdatedAt"} {
		if _, ok := keys[k]; !ok {
			return nil, fmt.Errorf("CreateTaskResult task lacks %q", k)
		}
	}
	r.created = append(r.created, task.TaskId)
	return &task, nil
}

func (r *runner) wait(ctx context.Context, id string) (*mcp.GetTaskResult, error) {
	res, err := r.c.WaitForTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: id}}, 50*time.Millisecond)
	if err != nil {
		return nil, fmt.Errorf("wait for task %s: %w", id, err)
	}
	return res, nil
}

func (r *runner) task(ctx context.Context) (map[string]any, error) {
	task, err := r.createTask(ctx, r.cfg.tools["task"])
	if err != nil {
		return nil, err
	}
	d := map[string]any{"taskId": task.TaskId, "created": task}
	end, err := r.wait(ctx, task.TaskId)
	if err != nil {
		return d, err
	}
	d["pollInterval"] = end.PollInterval
	if end.Status != mcp.TaskStatusCompleted {
		return d, fmt.Errorf("task ended %s (%s), want completed", end.Status, end.StatusMessage)
	}
	res, err := r.c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: task.TaskId}})
	if err != nil {
		return d, fmt.Errorf("tasks/result: %w", err)
	}
	d["text"] = firstText(res.Content)
	if rel := relatedTask(res.Meta); rel != task.TaskId {
		return d, fmt.Errorf("tasks/result related-task _meta = %q, want %s", rel, task.TaskId)
	}
	if res.IsError || len(res.Content) == 0 {
		return d, fmt.Errorf("tasks/result isError=%v with %d content items", res.IsError, len(res.Content))
	}
	return d, nil
}

func (r *runner) plain(ctx context.Context) (map[string]any, error) {
	spec := r.cfg.tools["plain"]
	req := mcp.CallToolRequest{}
	req.Params.Name = spec.Name
	req.Params.Arguments = spec.Args
	res, err := r.c.CallTool(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("tools/call %s: %w", spec.Name, err)
	}
	d := map[string]any{"text": firstText(res.Content)}
	if res.IsError || len(res.Content) == 0 {
		return d, fmt.Errorf("plain tools/call isError=%v with %d content items", res.IsError, len(res.Content))
	}
	return d, nil
}

func (r *runner) tasklist(ctx context.Context) (map[string]any, error) {
	res, err := r.c.ListTasks(ctx, mcp.ListTasksRequest{})
	if err != nil {
		return nil, fmt.Errorf("tasks/list: %w", err)
	}
	listed := map[string]bool{}
	for _, t := range res.Tasks {
		listed[t.TaskId] = true
	}
	var missing []string
	for _, id := range r.created {
		if !listed[id] {
			missing = append(missing, id)
		}
	}
	d := map[string]any{"created": len(r.created), "listed": len(listed)}
	if len(missing) > 0 {
		return d, fmt.Errorf("tasks/list lacks %d of %d created tasks: %s", len(missing), len(r.created), strings.Join(missing, ", "))
	}
	return d, nil
}

func (r *runner) cancel(ctx context.Context) (map[string]any, error) {
	task, err := r.createTask(ctx, r.cfg.tools["cancel"])
	if err != nil {
		return nil, err
	}
	d := map[string]any{"taskId": task.TaskId}
	cancelReq := mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: task.TaskId}}
	res, err := r.c.CancelTask(ctx, cancelReq)
	if err != nil {
		return d, fmt.Errorf("tasks/cancel: %w", err)
	}
	d["statusMessage"] = res.StatusMessage
	if res.Status != mcp.TaskStatusCancelled {
		return d, fmt.Errorf("tasks/cancel returned status %s, want cancelled", res.Status)
	}
	after, err := r.c.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: task.TaskId}})
	if err != nil {
		return d, fmt.Errorf("tasks/get after cancel: %w", err)
	}
	if after.Status != mcp.TaskStatusCancelled {
		return d, fmt.Errorf("tasks/get after cancel shows %s, want cancelled", after.Status)
	}
	_, err = r.c.CancelTask(ctx, cancelReq)
	d["secondCancel"] = errInfo(err)
	if err == nil {
		return d, errors.New("second tasks/cancel succeeded, want -32602")
	}
	if !errors.Is(err, mcp.ErrInvalidParams) {
		return d, fmt.Errorf("second tasks/cancel: %v, want -32602", err)
	}
	return d, nil
}

func (r *runner) fail(ctx context.Context) (map[string]any, error) {
	task, err := r.createTask(ctx, r.cfg.tools["fail"])
	if err != nil {
		return nil, err
	}
	d := map[string]any{"taskId": task.TaskId}
	end, err := r.wait(ctx, task.TaskId)
	if err != nil {
		return d, err
	}
	d["statusMessage"] = end.StatusMessage
	if end.Status != mcp.TaskStatusFailed {
		return d, fmt.Errorf("task ended %s, want failed", end.Status)
	}
	res, err := r.c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: task.TaskId}})
	switch {
	case err != nil:
		d["shape"] = "error"
		d["error"] = errInfo(err)
	case res.IsError:
		d["shape"] = "iserror"
		d["text"] = firstText(res.Content)
	default:
		d["shape"] = "result"
		return d, errors.New("tasks/result of a failed task returned a non-error result")
	}
	if r.cfg.expectFail != "any" && d["shape"] != r.cfg.expectFail {
		return d, fmt.Errorf("failure shape %v, want %s", d["shape"], r.cfg.expectFail)
	}
	return d, nil
}

// errInfo reports a JSON-RPC error's code as mcp-go exposes it: through
// sentinel errors.
func errInfo(err error) map[string]any {
	if err == nil {
		return nil
	}
	out := map[string]any{"message": err.Error()}
	for code, sentinel := range map[int]error{
		mcp.INVALID_PARAMS: mcp.ErrInvalidParams, mcp.INTERNAL_ERROR: mcp.ErrInternalError,
		mcp.METHOD_NOT_FOUND: mcp.ErrMethodNotFound, mcp.INVALID_REQUEST: mcp.ErrInvalidRequest,
	} {
		if errors.Is(err, sentinel) {
			out["code"] = code
		}
	}
	return out
}

func firstText(content []mcp.Content) string {
	for _, c := range content {
		if t, ok := mcp.AsTextContent(c); ok {
			return t.Text
		}
	}
	return ""
}

func relatedTask(meta *mcp.Meta) string {
	if meta == nil {
		return ""
	}
	rel, _ := meta.AdditionalFields[mcp.RelatedTaskMetaKey].(map[string]any)
	id, _ := rel["taskId"].(string)
	return id
}
