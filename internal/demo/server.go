// Package demo is the embedded modern MCP server (2026-07-28 plus the
// io.modelcontextprotocol/tasks extension) that `bridge demo` starts and that
// every end-to-end test of the project uses as its upstream.
//
// It is a real go-sdk v1.8.0 server (mcp.Server behind a stateless
// mcp.StreamableHTTPHandler, or mcp.Server.Run on stdio). The parts go-sdk
// does not provide are added around it: task-returning tools/call (receiving
// middleware), tasks/get|update|cancel (custom methods), strict Mcp-* header
// checks, Origin checks and modern-only era gating (http.Handler and
// mcp.Connection wrappers), and subscriptions/listen task push (listen.go;
// go-sdk v1.8.0 cannot send custom notifications).
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/version"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// ProtocolVersion is the only revision a modern-only demo server speaks.
const ProtocolVersion = "2026-07-28"

// TasksExtension is the extension id advertised in server/discover (M-49).
const TasksExtension = "io.modelcontextprotocol/tasks"

// legacyVersions are the additional revisions a DualEra server accepts.
var legacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// Options configure a Server. The zero value is a modern-only server with a
// 1 s poll interval, a 1 h TTL, push enabled and the wall clock.
type Options struct {
	// Name and Version are the serverInfo; defaults "tasksbridge-demo" and
	// the build version.
	Name, Version string
	// PollInterval is advertised as pollIntervalMs (default 1 s). Tests use
	// a few milliseconds.
	PollInterval time.Duration
	// TTL is advertised as ttlMs and enforced: after it a task is gone and
	// tasks/get answers -32602 (M-60, M-64). Zero means 1 h; negative means
	// unlimited (ttlMs null).
	TTL time.Duration
	// DualEra also accepts legacy initialize (2025-11-25 and older). The
	// default is modern-only: initialize and era-less requests are refused
	// with -32022 naming the supported versions (M-44), which is what makes
	// the bridge necessary.
	DualEra bool
	// DisablePush turns subscriptions/listen task notifications off: task
	// ids are then never acknowledged, so clients must poll.
	DisablePush bool
	// IgnoreCancel acknowledges tasks/cancel without stopping the task (the
	// extension allows it, M-59); it lets tests check that a bridge pins
	// cancelled locally.
	IgnoreCancel bool
	// JSONResponse makes HTTP answers application/json instead of SSE
	// (listen streams are always SSE).
	JSONResponse bool
	// Clock drives timestamps, TTL and task delays; default RealClock.
	Clock Clock
	// AllowedOrigins are extra Origin header values accepted besides
	// loopback origins (M-43: anything else gets 403).
	AllowedOrigins []string
	// ListenKeepAlive is the interval of SSE comment keep-alives on HTTP
	// listen streams; default 15 s, negative disables.
	ListenKeepAlive time.Duration
	// Logger receives go-sdk and server logs; default discards.
	Logger *slog.Logger
}

// Server is the embedded modern upstream. Create it with New.
type Server struct {
	opts  Options
	clock Clock
	impl  *mcp.Implementation
	mcp   *mcp.Server
	sdk   *mcp.StreamableHTTPHandler
	hub   *hub
	tools map[string]*taskTool

	mu sync.Mutex // guards st
	st *store

	closeOnce sync.Once
	closed    chan struct{} // closed by Close: listen streams end gracefully
}

// New builds a Server.
func New(opts Options) *Server {
	if opts.Name == "" {
		opts.Name = "tasksbridge-demo"
	}
	if opts.Version == "" {
		opts.Version = version.Version
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.TTL == 0 {
		opts.TTL = time.Hour
	}
	if opts.ListenKeepAlive == 0 {
		opts.ListenKeepAlive = 15 * time.Second
	}
	if opts.Clock == nil {
		opts.Clock = RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		opts:   opts,
		clock:  opts.Clock,
		impl:   &mcp.Implementation{Name: opts.Name, Version: opts.Version},
		hub:    newHub(),
		st:     newStore(),
		closed: make(chan struct{}),
	}

	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}
	caps.AddExtension(TasksExtension, nil) // {} (M-49)
	versions := []string{ProtocolVersion}
	if opts.DualEra {
		versions = append(versions, legacyVersions...)
	}
	s.mcp = mcp.NewServer(s.impl, &mcp.ServerOptions{
		Instructions: "Demo server for tasksbridge. echo is synchronous; slow_task, fail_task, error_task, " +
			"elicit_task and sample_task return tasks (io.modelcontextprotocol/tasks) and need the extension declared per request.",
		Logger:                    opts.Logger,
		Capabilities:              caps,
		SupportedProtocolVersions: versions,
	})
	s.addTools()
	s.mcp.AddReceivingMiddleware(s.middleware)
	must(mcp.AddReceivingCustomMethod(s.mcp, "tasks/get", s.tasksGet))
	must(mcp.AddReceivingCustomMethod(s.mcp, "tasks/update", s.tasksUpdate))
	must(mcp.AddReceivingCustomMethod(s.mcp, "tasks/cancel", s.tasksCancel))
	// tasks/result and tasks/list are deliberately not registered: go-sdk
	// answers -32601, HTTP 404 (M-66).

	s.sdk = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Stateless:    true, // 2026-07-28 over HTTP needs a stateless handler (go-sdk.md §3)
		JSONResponse: opts.JSONResponse,
		Logger:       opts.Logger,
	})
	return s
}

func must(err error) {
	if err != nil {
		panic("demo: " + err.Error())
	}
}

// MCPServer returns the underlying go-sdk server.
func (s *Server) MCPServer() *mcp.Server { return s.mcp }

// Options returns the effective options (defaults filled in).
func (s *Server) Options() Options { return s.opts }

// Close ends every subscriptions/listen stream gracefully (with its
// SubscriptionsListenResult, M-47) and stops pending task timers. It does
// not stop HTTP listeners (see Start).
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closed)
		s.mu.Lock()
		for _, t := range s.st.tasks {
			if t.stop != nil {
				t.stop()
			}
		}
		s.mu.Unlock()
	})
}

// principalKey carries the caller's principal (a hash of its Authorization
// header) from the HTTP layer to the handlers.
type principalKey struct{}

func principalFrom(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// reqCaps is what one request declared in its per-request _meta (§3.1).
type reqCaps struct {
	modern      bool // _meta protocolVersion ≥ 2026-07-28
	tasks       bool // extensions["io.modelcontextprotocol/tasks"]
	elicitation bool
	sampling    bool
}

// capsOf reads the per-request capabilities. Under a legacy (or absent)
// version the extension never enables tasks (M-66), and nothing is inferred
// from earlier requests (M-39, M-50).
func capsOf(meta map[string]any) reqCaps {
	var c reqCaps
	v, _ := meta[mcp.MetaKeyProtocolVersion].(string)
	if v < ProtocolVersion {
		return c
	}
	c.modern = true
	cc, _ := meta[mcp.MetaKeyClientCapabilities].(map[string]any)
	if ext, ok := cc["extensions"].(map[string]any); ok {
		_, c.tasks = ext[TasksExtension].(map[string]any)
	}
	_, c.elicitation = cc["elicitation"].(map[string]any)
	_, c.sampling = cc["sampling"].(map[string]any)
	return c
}

// missingCapability is the -32021 error (fact 1, M-39, M-51, M-61). data
// holds the capabilities that were required and not declared.
func missingCapability(required map[string]any) *rpc.Error {
	names := make([]string, 0, len(required))
	for k := range required {
		names = append(names, k)
	}
	sort.Strings(names)
	msg := "Missing required client capability"
	if _, ok := required["extensions"]; ok {
		msg += ": declare extensions[\"" + TasksExtension + "\"] in _meta[\"" + mcp.MetaKeyClientCapabilities + "\"]"
	} else if len(names) > 0 {
		msg += ": " + names[0]
	}
	return rpc.WithData(rpc.CodeMissingRequiredClientCapability, msg, map[string]any{"requiredCapabilities": required})
}

func tasksExtensionRequired() map[string]any {
	return map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}
}

// rawResult is a result built with json.Marshal from body (a JSON object),
// with resultType and _meta added: go-sdk sets resultType and
// serverInfo only on its own result types (go-sdk.md §8, M-41).
type rawResult struct {
	mcp.ResultBase
	resultType string
	body       any
}

func (r *rawResult) MarshalJSON() ([]byte, error) {
	m := map[string]json.RawMessage{}
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
	}
	rt, _ := json.Marshal(r.resultType)
	m["resultType"] = rt
	meta := map[string]any{}
	for k, v := range r.Meta {
		meta[k] = v
	}
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	m["_meta"] = mb
	return json.Marshal(m)
}

func (s *Server) result(resultType string, body any) *rawResult {
	r := &rawResult{resultType: resultType, body: body}
	r.Meta = mcp.Meta{mcp.MetaKeyServerInfo: s.impl}
	return r
}

// middleware intercepts tools/call of the task tools (go-sdk cannot return
// a CreateTaskResult from a tool handler) and refuses legacy initialize on
// a modern-only server.
func (s *Server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			if !s.opts.DualEra {
				var requested string
				if p, ok := req.GetParams().(*mcp.InitializeParams); ok && p != nil {
					requested = p.ProtocolVersion
				}
				return nil, s.legacyRefusal(requested)
			}
		case "tools/call":
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				if tt := s.tools[r.Params.Name]; tt != nil {
					return s.callTaskTool(ctx, r.Params, tt)
				}
			}
		}
		return next(ctx, method, req)
	}
}

// legacyRefusal is the error a modern-only server gives a legacy request,
// naming its supported versions (M-44).
func (s *Server) legacyRefusal(requested string) *rpc.Error {
	s.count(func(c *Counters) { c.LegacyRejected++ })
	if requested == "" {
		requested = "(none)"
	}
	return rpc.WithData(rpc.CodeUnsupportedProtocolVersion,
		"This server speaks only MCP "+ProtocolVersion+" (no initialize; send per-request _meta). Supported versions: "+ProtocolVersion,
		map[string]any{"supported": []string{ProtocolVersion}, "requested": requested})
}

// callTaskTool creates the task durably, starts its work, and answers with
// the flat CreateTaskResult (fact 4, M-53).
func (s *Server) callTaskTool(ctx context.Context, p *mcp.CallToolParamsRaw, tt *taskTool) (mcp.Result, error) {
	caps := capsOf(p.Meta)
	required := map[string]any{}
	if !caps.tasks {
		required["extensions"] = map[string]any{TasksExtension: map[string]any{}}
	}
	if tt.needsElicitation && !caps.elicitation {
		required["elicitation"] = map[string]any{"form": map[string]any{}}
	}
	if tt.needsSampling && !caps.sampling {
		required["sampling"] = map[string]any{}
	}
	if len(required) > 0 {
		s.count(func(c *Counters) { c.CapabilityFails++ })
		return nil, missingCapability(required)
	}
	start, rerr := tt.prepare(p.Arguments)
	if rerr != nil {
		return nil, rerr
	}
	t, snap := s.createTask(principalFrom(ctx), tt.name)
	start(s, t.id)
	return s.result("task", snap), nil
}

// TaskIDParams are the params of tasks/get and tasks/cancel.
type TaskIDParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

// UpdateParams are the params of tasks/update.
type UpdateParams struct {
	mcp.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

func (s *Server) requireTasks(meta map[string]any) error {
	if !capsOf(meta).tasks {
		s.count(func(c *Counters) { c.CapabilityFails++ })
		return missingCapability(tasksExtensionRequired())
	}
	return nil
}

// tasksGet answers the current DetailedTask (M-55, M-60).
func (s *Server) tasksGet(ctx context.Context, _ *mcp.ServerSession, p *TaskIDParams) (*rawResult, error) {
	if p == nil {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "invalid params: taskId is required")
	}
	if err := s.requireTasks(p.Meta); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.st.counters.TasksGet++
	if _, ok := s.st.tasks[p.TaskID]; ok {
		s.st.gets[p.TaskID]++
	}
	t, rerr := s.lookupLocked(p.TaskID, principalFrom(ctx))
	if rerr != nil {
		s.mu.Unlock()
		return nil, rerr
	}
	d := t.detailed()
	s.mu.Unlock()
	return s.result("complete", d), nil
}

// tasksUpdate delivers inputResponses: outstanding keys are accepted,
// unknown or already answered keys ignored, partial sets allowed (M-58).
func (s *Server) tasksUpdate(ctx context.Context, _ *mcp.ServerSession, p *UpdateParams) (*rawResult, error) {
	if p == nil {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "invalid params: taskId and inputResponses are required")
	}
	if err := s.requireTasks(p.Meta); err != nil {
		return nil, err
	}
	if p.InputResponses == nil {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "invalid params: inputResponses is required")
	}
	s.mu.Lock()
	s.st.counters.TasksUpdate++
	t, rerr := s.lookupLocked(p.TaskID, principalFrom(ctx))
	if rerr != nil {
		s.mu.Unlock()
		return nil, rerr
	}
	keys := make([]string, 0, len(p.InputResponses))
	for k := range p.InputResponses {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var finishes []func()
	changed := false
	for _, k := range keys {
		if t.answered[k] {
			s.st.counters.DuplicateKeys++
			continue
		}
		if _, ok := t.inputs[k]; !ok || t.onAnswer == nil {
			s.st.counters.UnknownKeys++
			continue
		}
		finish, aerr := t.onAnswer(k, p.InputResponses[k])
		if aerr != nil {
			s.mu.Unlock()
			return nil, aerr
		}
		s.st.counters.InputResponses++
		delete(t.inputs, k)
		for i, kk := range t.keys {
			if kk == k {
				t.keys = append(t.keys[:i], t.keys[i+1:]...)
				break
			}
		}
		t.answered[k] = true
		changed = true
		if finish != nil {
			finishes = append(finishes, finish)
		}
	}
	if changed && len(t.inputs) == 0 && t.status == StatusInputRequired {
		s.changeLocked(t, StatusWorking, "Input received; resuming.")
	}
	id := t.id
	s.mu.Unlock()
	if changed {
		s.hub.publish(id)
	}
	for _, f := range finishes {
		f()
	}
	return s.result("complete", nil), nil
}

// tasksCancel acknowledges; cancellation is cooperative: the task becomes
// cancelled unless it is already terminal (or IgnoreCancel is set) (M-59).
func (s *Server) tasksCancel(ctx context.Context, _ *mcp.ServerSession, p *TaskIDParams) (*rawResult, error) {
	if p == nil {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "invalid params: taskId is required")
	}
	if err := s.requireTasks(p.Meta); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.st.counters.TasksCancel++
	t, rerr := s.lookupLocked(p.TaskID, principalFrom(ctx))
	if rerr != nil {
		s.mu.Unlock()
		return nil, rerr
	}
	changed := false
	if !s.opts.IgnoreCancel && !terminal(t.status) {
		s.changeLocked(t, StatusCancelled, "The task was cancelled by request.")
		changed = true
	}
	id := t.id
	s.mu.Unlock()
	if changed {
		s.hub.publish(id)
	}
	return s.result("complete", nil), nil
}

var errNotTaskTool = errors.New("this tool only runs as a task")
