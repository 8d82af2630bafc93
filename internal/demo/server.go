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
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/version"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// ProtocolVersion is the only revision a modern-only demo server speaks.
const ProtocolVersion = modern.ProtocolVersion

// TasksExtension is the extension id advertised in server/discover (M-49).
const TasksExtension = modern.TasksExtensionID

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
	// IgnoreClientCapabilities runs elicitation and sampling tools for a
	// request that did not declare those capabilities, asking for the input
	// anyway (a non-conforming server; tests check that a bridge never
	// relays such a request and never hangs on it).
	IgnoreClientCapabilities bool
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

	listenEnded atomic.Pointer[func()] // test hook: called as each task listen ends
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
		Stateless:    true, // go-sdk v1.8.0 serves 2026-07-28 over HTTP only statelessly
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

// metaOf decodes a request's per-request _meta (M-01, M-02) from go-sdk's
// generic map; an undecodable one reads as empty (nothing declared).
func metaOf(m map[string]any) modern.RequestMeta {
	b, err := json.Marshal(map[string]any{"_meta": m})
	if err != nil {
		return modern.RequestMeta{}
	}
	rm, err := modern.DecodeRequestMeta(b)
	if err != nil {
		return modern.RequestMeta{}
	}
	return rm
}

// declaredCaps returns the client capabilities one request declared. Under
// a legacy (or absent) version nothing counts, so the extension never
// enables tasks there (M-66); nothing is inferred from earlier requests
// (M-39, M-50).
func declaredCaps(rm modern.RequestMeta) modern.ClientCapabilities {
	if rm.ProtocolVersion < ProtocolVersion || rm.ClientCapabilities == nil {
		return modern.ClientCapabilities{}
	}
	return *rm.ClientCapabilities
}

// sdkResult adapts a modern result type (which writes resultType and
// _meta itself; go-sdk does so only for its own result types,
// M-41) to go-sdk's mcp.Result.
type sdkResult struct {
	mcp.ResultBase
	v json.Marshaler
}

func (r *sdkResult) MarshalJSON() ([]byte, error) { return r.v.MarshalJSON() }

// resultMeta is the _meta of every custom result: serverInfo (M-41).
func (s *Server) resultMeta() modern.Object {
	m, err := modern.WithServerInfo(nil, modern.Implementation{Name: s.impl.Name, Version: s.impl.Version})
	if err != nil {
		return nil
	}
	return m
}

func (s *Server) ack() *sdkResult {
	return &sdkResult{v: modern.EmptyResult{Meta: s.resultMeta()}}
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

// removedMethod answers tasks/result and tasks/list, which 2026-07-28 +
// the extension removed, with an informative -32601 (M-34, M-66). go-sdk
// would answer -32601 too, with a less helpful message.
func (s *Server) removedMethod(req *jsonrpc.Request) *rpc.Error {
	if !req.IsCall() || (req.Method != modern.MethodTasksResult && req.Method != modern.MethodTasksList) {
		return nil
	}
	s.count(func(c *Counters) { c.RemovedMethods++ })
	return modern.ErrMethodNotFound(req.Method)
}

// legacyRefusal is the error a modern-only server gives a legacy request,
// naming its supported versions (M-44).
func (s *Server) legacyRefusal(requested string) *rpc.Error {
	s.count(func(c *Counters) { c.LegacyRejected++ })
	return modern.ErrUnsupportedProtocolVersion(requested, s.versions())
}

// callTaskTool creates the task durably, starts its work, and answers with
// the flat CreateTaskResult (M-52, M-53).
func (s *Server) callTaskTool(ctx context.Context, p *mcp.CallToolParamsRaw, tt *taskTool) (mcp.Result, error) {
	caps := declaredCaps(metaOf(p.Meta))
	var required modern.ClientCapabilities
	missing := false
	if !caps.HasTasksExtension() {
		required.AddExtension(modern.TasksExtensionID, modern.Object{})
		missing = true
	}
	if tt.needsElicitation && !caps.SupportsElicitationForm() && !s.opts.IgnoreClientCapabilities {
		required.Elicitation = &modern.Object{"form": json.RawMessage("{}")}
		missing = true
	}
	if tt.needsSampling && !caps.SupportsSampling() && !s.opts.IgnoreClientCapabilities {
		required.Sampling = &modern.Object{}
		missing = true
	}
	if missing { // M-50, M-51: never a CreateTaskResult to a non-declaring request
		s.count(func(c *Counters) { c.CapabilityFails++ })
		return nil, modern.ErrMissingRequiredClientCapability(required, "tools/call "+tt.name+" (it only runs as a task)")
	}
	start, rerr := tt.prepare(p.Arguments)
	if rerr != nil {
		return nil, rerr
	}
	t, snap := s.createTask(principalFrom(ctx), tt.name)
	start(s, t.id)
	return &sdkResult{v: modern.CreateTaskResult{Task: snap, Meta: s.resultMeta()}}, nil
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

func (s *Server) requireTasks(method string, meta map[string]any) error {
	if !declaredCaps(metaOf(meta)).HasTasksExtension() { // M-61
		s.count(func(c *Counters) { c.CapabilityFails++ })
		return modern.ErrTasksExtensionRequired(method)
	}
	return nil
}

// tasksGet answers the current DetailedTask (M-55, M-60).
func (s *Server) tasksGet(ctx context.Context, _ *mcp.ServerSession, p *TaskIDParams) (*sdkResult, error) {
	if p == nil {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: taskId is required")
	}
	if err := s.requireTasks("tasks/get", p.Meta); err != nil {
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
	return &sdkResult{v: modern.GetTaskResult{DetailedTask: d, Meta: s.resultMeta()}}, nil
}

// tasksUpdate delivers inputResponses: outstanding keys are accepted,
// unknown or already answered keys ignored, partial sets allowed (M-58).
func (s *Server) tasksUpdate(ctx context.Context, _ *mcp.ServerSession, p *UpdateParams) (*sdkResult, error) {
	if p == nil {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: taskId and inputResponses are required")
	}
	if err := s.requireTasks("tasks/update", p.Meta); err != nil {
		return nil, err
	}
	if p.InputResponses == nil {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: inputResponses is required (an object mapping input request keys to responses)")
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
	// Validate every outstanding answer before applying any, so a bad
	// entry leaves the task untouched.
	type accepted struct {
		key    string
		finish func()
	}
	var ok []accepted
	dups, unknown := 0, 0
	for _, k := range keys {
		if t.answered[k] {
			dups++
			continue
		}
		req, outstanding := t.inputs[k]
		if !outstanding || t.onAnswer == nil {
			unknown++
			continue
		}
		kind, err := modern.ClassifyInputResponse(p.InputResponses[k])
		if err != nil {
			s.mu.Unlock()
			return nil, rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: inputResponses[%q]: %v", k, err)
		}
		if want := req.Kind(); kind != want {
			s.mu.Unlock()
			return nil, rpc.Errorf(rpc.CodeInvalidParams,
				"Invalid params: inputResponses[%q] is a %s response but the request was %s", k, kind, req.Method)
		}
		finish, aerr := t.onAnswer(k, p.InputResponses[k])
		if aerr != nil {
			s.mu.Unlock()
			return nil, aerr
		}
		ok = append(ok, accepted{k, finish})
	}
	s.st.counters.DuplicateKeys += dups
	s.st.counters.UnknownKeys += unknown
	var finishes []func()
	for _, a := range ok {
		s.st.counters.InputResponses++
		delete(t.inputs, a.key)
		t.answered[a.key] = true
		if a.finish != nil {
			finishes = append(finishes, a.finish)
		}
	}
	changed := len(ok) > 0
	if changed && len(t.inputs) == 0 && t.status == modern.StatusInputRequired {
		s.changeLocked(t, modern.StatusWorking, "Input received; resuming.")
	}
	id := t.id
	s.mu.Unlock()
	if changed {
		s.hub.publish(id)
	}
	for _, f := range finishes {
		f()
	}
	return s.ack(), nil
}

// tasksCancel acknowledges; cancellation is cooperative: the task becomes
// cancelled unless it is already terminal (or IgnoreCancel is set) (M-59).
func (s *Server) tasksCancel(ctx context.Context, _ *mcp.ServerSession, p *TaskIDParams) (*sdkResult, error) {
	if p == nil {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: taskId is required")
	}
	if err := s.requireTasks("tasks/cancel", p.Meta); err != nil {
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
	if !s.opts.IgnoreCancel && !t.status.IsTerminal() {
		s.changeLocked(t, modern.StatusCancelled, "The task was cancelled by request.")
		changed = true
	}
	id := t.id
	s.mu.Unlock()
	if changed {
		s.hub.publish(id)
	}
	return s.ack(), nil
}

var errNotTaskTool = errors.New("this tool only runs as a task")
