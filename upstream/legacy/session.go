package legacyup

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// ProtocolVersion is the revision every upstream session is pinned to.
const ProtocolVersion = legacy.ProtocolVersion

// SideRequest is a server→client request the upstream sent while a call was
// in flight: an elicitation/create, sampling/createMessage or roots/list,
// typically on the stream of a blocking tasks/result (L-46)
// or of a tools/call that asks before it creates its task. Answer it with
// Session.Respond under ID.
type SideRequest struct {
	// ID is the upstream's JSON-RPC id, raw (a string or a number).
	ID json.RawMessage
	// Method and Params are the request's; Params is nil when absent.
	Method string
	Params json.RawMessage
	// Raw is the whole request message as the upstream sent it.
	Raw json.RawMessage
	// RelatedTask is params._meta["io.modelcontextprotocol/related-task"].taskId
	// ("" when the upstream put none).
	RelatedTask string
}

// CallOptions route what arrives for one call.
type CallOptions struct {
	// OnRequest receives the server→client requests that belong to this call:
	// on HTTP those that arrive on its response stream; on a multiplexed
	// (stdio) connection those whose related-task _meta names RelatedTask,
	// else those nothing else claims (see Session.Call). It runs on its own
	// goroutine and may block; nil means the call takes no requests.
	OnRequest func(*SideRequest)
	// OnNotify receives the notifications that belong to this call (on HTTP
	// those on its stream; on stdio progress notifications carrying its
	// progressToken). It must not block.
	OnNotify func(method string, params json.RawMessage)
	// RelatedTask names the upstream task whose server→client requests this
	// call receives on a multiplexed connection (the blocking tasks/result).
	RelatedTask string
	// Wait marks a wait the bridge holds open for a task on a client's
	// behalf (the blocking tasks/result): its lifetime is the task's, which
	// the caller bounds with ctx, so Config.Timeout does not cut it.
	Wait bool
}

// Session is one initialized upstream session. It is safe for concurrent use.
type Session struct {
	pool *Pool
	key  string
	id   string
	seq  atomic.Int64
	// idPrefix starts the JSON-RPC ids of this handle's calls ("tb-" and 50
	// random bits): other bridge processes send on the same upstream session
	// (shared.go), and a server refuses an id already in flight on it.
	idPrefix string

	cs   *mcp.ClientSession // nil for a session resumed by id (HTTP)
	wire wire
	// shared: the session is recorded in the pool's store for every replica
	// (shared.go), so closing it here must not end it upstream.
	shared atomic.Bool

	ctx    context.Context // ends when the session dies
	cancel context.CancelFunc
	once   sync.Once
	err    error

	mu         sync.Mutex
	initResult json.RawMessage
	tasks      *legacy.ServerTasksCapability
	inflight   map[string]*call // by the call's raw id
	order      int64
	tools      map[string]legacy.TaskSupport
	toolsOK    bool
	// sides maps the raw ids of server→client requests the bridge has not
	// answered yet to the bound of the call they came on (timeout.go).
	sides map[string]*silence
}

// call is one request in flight.
type call struct {
	id       string
	method   string
	opts     CallOptions
	order    int64
	progress string // raw JSON of params._meta.progressToken ("" = none)
	resp     chan *jsonrpc.Response
	silence  *silence // nil: unbounded (timeout.go)
}

// wire carries the raw messages of a session.
type wire interface {
	// roundTrip sends c's request and returns its result; messages that
	// arrive on the way are dispatched to s.
	roundTrip(ctx context.Context, s *Session, c *call, req *jsonrpc.Request) (json.RawMessage, error)
	// send delivers a response or a notification to the upstream.
	send(ctx context.Context, s *Session, msg jsonrpc.Message) error
}

func newSession(p *Pool, key string) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	return &Session{pool: p, key: key, ctx: ctx, cancel: cancel, inflight: map[string]*call{},
		sides: map[string]*silence{}, idPrefix: "tb-" + rand.Text()[:10] + "-"}
}

// ID is the upstream's Mcp-Session-Id (HTTP; "" when the upstream assigns
// none) or a bridge-minted name for a stdio session.
func (s *Session) ID() string { return s.id }

// Key is the pool key (principal) the session serves.
func (s *Session) Key() string { return s.key }

// Target names the upstream.
func (s *Session) Target() string { return s.pool.cfg.Target }

// InitializeResult is the upstream's raw InitializeResult (nil for a session
// resumed by id after a restart whose record did not carry it).
func (s *Session) InitializeResult() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initResult
}

// TasksCapability is capabilities.tasks of the InitializeResult (nil when the
// upstream declared none, or the InitializeResult is unknown).
func (s *Session) TasksCapability() *legacy.ServerTasksCapability {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tasks
}

// setInitializeResult records the upstream's InitializeResult of the session
// (from initialize, or from the shared record of a session another process
// opened), unless it is already known.
func (s *Session) setInitializeResult(raw json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.initResult) > 0 {
		return
	}
	s.initResult = append(json.RawMessage(nil), raw...)
	if tc, err := legacy.InitializeResultTasks(s.initResult); err == nil {
		s.tasks = tc
	}
}

// Done is closed when the session has ended.
func (s *Session) Done() <-chan struct{} { return s.ctx.Done() }

// Err says why the session ended (an *Error matching ErrSessionGone), or nil
// while it is alive.
func (s *Session) Err() error {
	select {
	case <-s.ctx.Done():
		return s.err
	default:
		return nil
	}
}

// Alive reports whether the session can still be used.
func (s *Session) Alive() bool { return s.Err() == nil }

// fail ends the session with err (the first reason wins). Calls in flight
// fail with it.
func (s *Session) fail(err error) {
	s.once.Do(func() {
		s.err = err
		s.cancel()
		s.pool.forget(s)
	})
}

// gone builds the ErrSessionGone error for reason.
func (s *Session) gone(reason string) *Error {
	name := s.id
	if name == "" {
		name = "(no id)"
	}
	return newError(ErrSessionGone, nil, "legacy upstream %s: session %s ended: %s", s.pool.cfg.Target, name, reason)
}

// Close ends the session: the go-sdk session is closed (on HTTP that sends
// DELETE), calls in flight fail with ErrSessionGone.
func (s *Session) Close() error {
	s.fail(s.gone("closed by the bridge"))
	if s.cs != nil {
		return s.cs.Close()
	}
	return nil
}

// Call sends one request on the session and returns its raw result. params
// is the raw params object (nil for none). A JSON-RPC error from the upstream
// is returned unchanged as *rpc.Error; transport failures are *Error.
// Cancelling ctx abandons the call: on HTTP its stream is closed, on stdio
// notifications/cancelled names it.
//
// On a multiplexed (stdio) connection a server→client request goes to the
// in-flight call whose RelatedTask its related-task _meta names; a request
// without one goes to the only call that takes requests, or to the oldest
// such call without RelatedTask (an upstream that sends concurrent untagged
// requests cannot be told apart on stdio).
//
// The upstream's silence on the call is bounded by Config.Timeout (except
// for a CallOptions.Wait): past it the call is cancelled upstream and
// returns an *Error for which Timeout reports true.
func (s *Session) Call(ctx context.Context, method string, params json.RawMessage, opts CallOptions) (json.RawMessage, error) {
	if err := s.Err(); err != nil {
		return nil, unsent{err}
	}
	c := &call{id: s.idPrefix + strconv.FormatInt(s.seq.Add(1), 10), method: method, opts: opts, resp: make(chan *jsonrpc.Response, 1)}
	c.progress = progressTokenOf(params)
	id, err := jsonrpc.MakeID(c.id)
	if err != nil {
		return nil, fmt.Errorf("legacy upstream: make request id: %w", err)
	}
	// The bound is set before the call is findable: messages routed to it
	// read c.silence.
	ctx, finish := s.bound(ctx, c)
	s.mu.Lock()
	s.order++
	c.order = s.order
	s.inflight[c.id] = c
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.inflight, c.id)
		s.mu.Unlock()
	}()
	return finish(s.wire.roundTrip(ctx, s, c, &jsonrpc.Request{ID: id, Method: method, Params: params}))
}

// Respond answers the upstream's server→client request id with result, or
// with rerr when it is not nil.
func (s *Session) Respond(ctx context.Context, id json.RawMessage, result json.RawMessage, rerr *rpc.Error) error {
	jid, err := idFromRaw(id)
	if err != nil {
		return err
	}
	s.answered(jid)
	resp := &jsonrpc.Response{ID: jid}
	if rerr != nil {
		resp.Error = rerr
	} else {
		if len(result) == 0 {
			result = json.RawMessage("{}")
		}
		resp.Result = result
	}
	if err := s.Err(); err != nil {
		return err
	}
	ctx, cancel := s.sendBound(ctx)
	defer cancel()
	return s.wire.send(ctx, s, resp)
}

// Notify sends a notification to the upstream.
func (s *Session) Notify(ctx context.Context, method string, params json.RawMessage) error {
	if err := s.Err(); err != nil {
		return err
	}
	ctx, cancel := s.sendBound(ctx)
	defer cancel()
	return s.wire.send(ctx, s, &jsonrpc.Request{Method: method, Params: params})
}

// idFromRaw converts a raw JSON-RPC id into go-sdk's ID.
func idFromRaw(raw json.RawMessage) (jsonrpc.ID, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return jsonrpc.ID{}, rpc.Errorf(rpc.CodeInvalidParams, "invalid JSON-RPC id %s", raw)
	}
	switch x := v.(type) {
	case string:
		return jsonrpc.MakeID(x)
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			return jsonrpc.ID{}, rpc.Errorf(rpc.CodeInvalidParams, "JSON-RPC id %s is not an integer", raw)
		}
		return jsonrpc.MakeID(float64(n))
	}
	return jsonrpc.ID{}, rpc.Errorf(rpc.CodeInvalidParams, "JSON-RPC id %s is neither a string nor a number", raw)
}

// rawID renders go-sdk's ID as raw JSON.
func rawID(id jsonrpc.ID) json.RawMessage {
	b, err := json.Marshal(id.Raw())
	if err != nil {
		return nil
	}
	return b
}

// progressTokenOf returns the raw progressToken of params._meta ("" = none).
func progressTokenOf(params json.RawMessage) string {
	if len(params) == 0 {
		return ""
	}
	// Member by member: a tool's arguments (most of a large call) are
	// skipped over, not decoded. Names match as encoding/json matches a
	// struct's (case-insensitively, the last duplicate wins).
	token := ""
	for k, v := range rawjson.All(params) {
		if !strings.EqualFold(string(rawjson.KeyBytes(k)), "_meta") {
			continue
		}
		for mk, mv := range rawjson.All(v) {
			if strings.EqualFold(string(rawjson.KeyBytes(mk)), "progressToken") {
				token = string(mv)
			}
		}
	}
	if token == "null" {
		return ""
	}
	return token
}

// isSideMethod reports whether a server→client request is one the bridge
// relays (L-46: elicitation, sampling, roots); others (ping aside) are refused.
func isSideMethod(method string) bool {
	switch method {
	case legacy.MethodElicitationCreate, legacy.MethodSamplingCreateMessage, legacy.MethodRootsList:
		return true
	}
	return false
}

// handleRequest dispatches a server→client request that arrived on via's
// stream (via is nil on a multiplexed connection).
func (s *Session) handleRequest(req *jsonrpc.Request, raw json.RawMessage, via *call) {
	if req.Method == "ping" {
		go func() { _ = s.Respond(s.ctx, rawID(req.ID), json.RawMessage("{}"), nil) }()
		return
	}
	if !isSideMethod(req.Method) {
		go func() {
			_ = s.Respond(s.ctx, rawID(req.ID), nil, rpc.Errorf(rpc.CodeMethodNotFound, "Method not found: %s", req.Method))
		}()
		return
	}
	sr := &SideRequest{ID: rawID(req.ID), Method: req.Method, Params: req.Params, Raw: raw}
	if len(sr.Raw) == 0 {
		if b, err := jsonrpc.EncodeMessage(req); err == nil {
			sr.Raw = b
		}
	}
	if id, ok, err := legacy.RelatedTaskOf(req.Params); err == nil && ok {
		sr.RelatedTask = id
	}
	target := via
	if target == nil || target.opts.OnRequest == nil {
		target = s.route(sr)
	}
	if target != nil && target.silence != nil {
		// The upstream now waits for the bridge: its silence is not the
		// upstream's slowness until the bridge answers (Respond).
		target.silence.hold(string(sr.ID))
		s.mu.Lock()
		s.sides[string(sr.ID)] = target.silence
		s.mu.Unlock()
	}
	if target == nil {
		s.pool.logger().Warn("legacy upstream: server→client request with no pending call to relay it to; refused",
			"upstream", s.pool.cfg.Target, "method", req.Method)
		go func() {
			_ = s.Respond(s.ctx, sr.ID, nil, rpc.Errorf(rpc.CodeInternalError,
				"the bridge has no pending request to relay %s to", req.Method))
		}()
		return
	}
	go target.opts.OnRequest(sr)
}

// route picks the in-flight call a request without a known stream belongs to.
func (s *Session) route(sr *SideRequest) *call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var only, oldestUntagged *call
	n := 0
	for _, c := range s.inflight {
		if c.opts.OnRequest == nil {
			continue
		}
		if sr.RelatedTask != "" && c.opts.RelatedTask == sr.RelatedTask {
			return c
		}
		n++
		only = c
		if c.opts.RelatedTask == "" && (oldestUntagged == nil || c.order < oldestUntagged.order) {
			oldestUntagged = c
		}
	}
	if n == 1 && (sr.RelatedTask == "" || only.opts.RelatedTask == "") {
		return only
	}
	return oldestUntagged
}

// handleNotification dispatches a notification that arrived on via's stream
// (via is nil on a multiplexed connection).
func (s *Session) handleNotification(method string, params json.RawMessage, via *call) {
	if via != nil && via.silence != nil {
		via.silence.touch() // the upstream is working on the call
	}
	if via != nil && via.opts.OnNotify != nil {
		via.opts.OnNotify(method, params)
		return
	}
	if method == "notifications/progress" {
		var p struct {
			Token json.RawMessage `json:"progressToken"`
		}
		if json.Unmarshal(params, &p) == nil && len(p.Token) > 0 {
			s.mu.Lock()
			var target *call
			for _, c := range s.inflight {
				if c.progress == string(p.Token) && c.opts.OnNotify != nil {
					target = c
					break
				}
			}
			s.mu.Unlock()
			if target != nil {
				if target.silence != nil {
					target.silence.touch()
				}
				target.opts.OnNotify(method, params)
				return
			}
		}
	}
	if method == "notifications/tools/list_changed" {
		s.InvalidateTools()
	}
	if f := s.pool.cfg.OnNotification; f != nil {
		f(s, method, params)
	}
}

// deliver hands a response read on a multiplexed connection to its call.
func (s *Session) deliver(resp *jsonrpc.Response) bool {
	id, ok := resp.ID.Raw().(string)
	if !ok || !strings.HasPrefix(id, "tb-") {
		return false
	}
	s.mu.Lock()
	c := s.inflight[id]
	s.mu.Unlock()
	if c != nil {
		select {
		case c.resp <- resp:
		default:
		}
	}
	return true // ours even when the caller already gave up
}

// resultOf turns a response into the call's result or error.
func resultOf(resp *jsonrpc.Response) (json.RawMessage, error) {
	if resp.Error != nil {
		var we *jsonrpc.Error
		if errors.As(resp.Error, &we) {
			return nil, we
		}
		return nil, rpc.Errorf(rpc.CodeInternalError, "%v", resp.Error)
	}
	if len(resp.Result) == 0 {
		return json.RawMessage("{}"), nil
	}
	return resp.Result, nil
}

// ToolSupport returns the legacy execution.taskSupport of tool name (the
// schema default "" = forbidden for an unknown tool), listing the upstream's
// tools once and caching them until InvalidateTools or a
// notifications/tools/list_changed.
func (s *Session) ToolSupport(ctx context.Context, name string) (legacy.TaskSupport, error) {
	s.mu.Lock()
	if s.toolsOK {
		ts, ok := s.tools[name]
		s.mu.Unlock()
		if ok {
			return ts, nil
		}
		return "", nil
	}
	s.mu.Unlock()
	all := map[string]legacy.TaskSupport{}
	cursor := ""
	for page := 0; page < 100; page++ {
		params := json.RawMessage("{}")
		if cursor != "" {
			b, err := json.Marshal(map[string]string{"cursor": cursor})
			if err != nil {
				return "", err
			}
			params = b
		}
		res, err := s.Call(ctx, "tools/list", params, CallOptions{})
		if err != nil {
			return "", err
		}
		m, err := legacy.ListToolsTaskSupport(res)
		if err != nil {
			return "", newError(ErrBadResponse, err, "legacy upstream %s: tools/list result: %v", s.pool.cfg.Target, rpc.As(err).Message)
		}
		for k, v := range m {
			all[k] = v
		}
		var next struct {
			NextCursor string `json:"nextCursor"`
		}
		_ = json.Unmarshal(res, &next)
		if next.NextCursor == "" {
			break
		}
		cursor = next.NextCursor
	}
	// Read before publishing: once cached, NoteTools writes into the map
	// under s.mu, so an unlocked read afterwards would race.
	ts := all[name]
	s.mu.Lock()
	s.tools, s.toolsOK = all, true
	s.mu.Unlock()
	return ts, nil
}

// NoteTools merges a tools/list page the caller fetched into the cache (it
// does not mark the cache complete).
func (s *Session) NoteTools(result json.RawMessage) {
	m, err := legacy.ListToolsTaskSupport(result)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tools == nil {
		s.tools = map[string]legacy.TaskSupport{}
	}
	for k, v := range m {
		s.tools[k] = v
	}
}

// InvalidateTools drops the cached tool list.
func (s *Session) InvalidateTools() {
	s.mu.Lock()
	s.tools, s.toolsOK = nil, false
	s.mu.Unlock()
}

// GetTask sends tasks/get and returns the raw legacy Task result.
func (s *Session) GetTask(ctx context.Context, taskID string) (json.RawMessage, error) {
	return s.Call(ctx, legacy.MethodTasksGet, taskIDParams(taskID), CallOptions{})
}

// CancelTask sends tasks/cancel and returns the whole JSON-RPC response
// (result or error), as translate.ModernCancelReply reads it; only transport
// failures are errors.
func (s *Session) CancelTask(ctx context.Context, taskID string) (json.RawMessage, error) {
	res, err := s.Call(ctx, legacy.MethodTasksCancel, taskIDParams(taskID), CallOptions{})
	return responseOf(res, err)
}

// TaskResult sends the blocking tasks/result for taskID and returns the
// whole JSON-RPC response once the task is terminal (L-41, L-42),
// as translate.LegacyOutcomeFromResponse reads it. Server→client requests the
// upstream sends for the task meanwhile go to onRequest (L-46). Only
// transport failures are errors. It is a wait (CallOptions.Wait):
// Config.Timeout does not cut it, ctx must end it when the task or its
// client does.
func (s *Session) TaskResult(ctx context.Context, taskID string, onRequest func(*SideRequest)) (json.RawMessage, error) {
	res, err := s.Call(ctx, legacy.MethodTasksResult, taskIDParams(taskID), CallOptions{OnRequest: onRequest, RelatedTask: taskID, Wait: true})
	return responseOf(res, err)
}

// FetchTaskResult is TaskResult as an ordinary request, bounded by
// Config.Timeout: for a task the caller expects to be terminal already (or
// past its ttl), whose tasks/result should answer at once.
func (s *Session) FetchTaskResult(ctx context.Context, taskID string, onRequest func(*SideRequest)) (json.RawMessage, error) {
	res, err := s.Call(ctx, legacy.MethodTasksResult, taskIDParams(taskID), CallOptions{OnRequest: onRequest, RelatedTask: taskID})
	return responseOf(res, err)
}

// ListTasks sends tasks/list (cursor "" for the first page) and returns the
// raw result.
func (s *Session) ListTasks(ctx context.Context, cursor string) (json.RawMessage, error) {
	params := json.RawMessage("{}")
	if cursor != "" {
		b, err := json.Marshal(map[string]string{"cursor": cursor})
		if err != nil {
			return nil, err
		}
		params = b
	}
	return s.Call(ctx, legacy.MethodTasksList, params, CallOptions{})
}

func taskIDParams(taskID string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"taskId": taskID})
	return b
}

// responseOf renders a call's outcome as a JSON-RPC response (id 0), keeping
// transport failures as errors.
func responseOf(res json.RawMessage, err error) (json.RawMessage, error) {
	if err != nil {
		var re *rpc.Error
		var te *Error
		if errors.As(err, &te) || !errors.As(err, &re) {
			return nil, err
		}
		return legacy.Response{ID: legacy.IntID(0), Error: re}.MarshalJSON()
	}
	return legacy.Response{ID: legacy.IntID(0), Result: res}.MarshalJSON()
}
