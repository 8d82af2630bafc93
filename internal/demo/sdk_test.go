package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// The go-sdk v1.8.0 client gaps (docs/ARCHITECTURE.md, What go-sdk v1.8.0
// leaves to the bridge) are bridged in these tests
// the way the bridge's upstream client must bridge them: an Mcp-Name
// RoundTripper for tasks/*, and a connection wrapper that keeps a
// CreateTaskResult from being swallowed by ClientSession.CallTool.

// mcpNameRT sets Mcp-Name = params.taskId on tasks/* requests.
type mcpNameRT struct{ next http.RoundTripper }

func (rt mcpNameRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasPrefix(r.Header.Get("Mcp-Method"), "tasks/") && r.GetBody != nil {
		if rc, err := r.GetBody(); err == nil {
			b, _ := io.ReadAll(rc)
			var p struct {
				Params struct {
					TaskID string `json:"taskId"`
				} `json:"params"`
			}
			if json.Unmarshal(b, &p) == nil && p.Params.TaskID != "" {
				r = r.Clone(r.Context())
				r.Body = io.NopCloser(bytes.NewReader(b))
				r.Header.Set("Mcp-Name", modern.EncodeHeaderValue(p.Params.TaskID))
			}
		}
	}
	return rt.next.RoundTrip(r)
}

const createTaskKey = "tasksbridge.test/createTask"

// keepTask moves a CreateTaskResult into _meta of a CallToolResult.
type keepTask struct{ mcp.Transport }

func (k keepTask) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := k.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return keepTaskConn{c}, nil
}

type keepTaskConn struct{ mcp.Connection }

func (c keepTaskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil && resp.Error == nil {
		var probe struct {
			ResultType string `json:"resultType"`
		}
		if json.Unmarshal(resp.Result, &probe) == nil && probe.ResultType == "task" {
			resp.Result, _ = json.Marshal(map[string]any{
				"resultType": "complete", "content": []any{},
				"_meta": map[string]any{createTaskKey: json.RawMessage(resp.Result)},
			})
		}
	}
	return msg, err
}

// taskResult decodes any modern task result (DetailedTask or ack).
type taskResult struct {
	mcp.ResultBase
	Raw json.RawMessage
}

func (r *taskResult) UnmarshalJSON(b []byte) error {
	r.Raw = append(json.RawMessage(nil), b...)
	return nil
}

func newSDKClient(t *testing.T, elicit bool) *mcp.Client {
	t.Helper()
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(TasksExtension, nil)
	if elicit {
		caps.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "demo-sdk-test", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
	for _, m := range []string{"tasks/get", "tasks/cancel"} {
		if err := mcp.AddSendingCustomMethod[*TaskIDParams, *taskResult](c, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := mcp.AddSendingCustomMethod[*UpdateParams, *taskResult](c, "tasks/update"); err != nil {
		t.Fatal(err)
	}
	return c
}

func connectHTTP(t *testing.T, ctx context.Context, url string, c *mcp.Client, rt http.RoundTripper) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, HTTPClient: &http.Client{Transport: rt}}
	cs, err := c.Connect(ctx, keepTask{tr}, &mcp.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callForTask(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) modern.CreateTaskResult {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	raw, ok := res.Meta[createTaskKey]
	if !ok {
		t.Fatalf("tools/call %s did not return a task: %+v", name, res)
	}
	b, _ := json.Marshal(raw)
	ct, err := modern.DecodeCreateTaskResult(b)
	if err != nil {
		t.Fatalf("CreateTaskResult %s: %v", b, err)
	}
	return ct
}

func sdkGet(t *testing.T, ctx context.Context, cs *mcp.ClientSession, id string) (modern.GetTaskResult, json.RawMessage) {
	t.Helper()
	r, err := mcp.CallCustomMethod[*TaskIDParams, *taskResult](ctx, cs, "tasks/get", &TaskIDParams{TaskID: id})
	if err != nil {
		t.Fatalf("tasks/get: %v", err)
	}
	g, err := modern.DecodeGetTaskResult(r.Raw)
	if err != nil {
		t.Fatalf("GetTaskResult %s: %v", r.Raw, err)
	}
	return g, r.Raw
}

func TestGoSDKClientFullFlow(t *testing.T) {
	v := schemacheck.Load(t)
	_, clk, url := startServer(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	cs := connectHTTP(t, ctx, url, newSDKClient(t, true), mcpNameRT{http.DefaultTransport})

	init := cs.InitializeResult()
	if init.ProtocolVersion != ProtocolVersion {
		t.Errorf("negotiated %s", init.ProtocolVersion)
	}
	if _, ok := init.Capabilities.Extensions[TasksExtension]; !ok {
		t.Errorf("discover lacks the extension")
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = true
	}
	for _, n := range []string{"echo", "slow_task", "fail_task", "error_task", "elicit_task", "sample_task"} {
		if !names[n] {
			t.Errorf("tools/list lacks %s", n)
		}
	}
	echo, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "sdk"}})
	if err != nil || echo.Content[0].(*mcp.TextContent).Text != "sdk" {
		t.Fatalf("echo: %v %+v", err, echo)
	}

	ct := callForTask(t, ctx, cs, "slow_task", map[string]any{"ms": 20, "text": "via sdk"})
	g, raw := sdkGet(t, ctx, cs, ct.TaskID)
	v.Check(t, schemacheck.Ext, "GetTaskResult", raw)
	if g.Status != modern.StatusWorking {
		t.Errorf("status %s", g.Status)
	}
	clk.Advance(20 * time.Millisecond)
	g, _ = sdkGet(t, ctx, cs, ct.TaskID)
	if text, _ := textOf(t, g.Result); g.Status != modern.StatusCompleted || text != "via sdk" {
		t.Errorf("completed: %s %s", g.Status, g.Result)
	}

	// Elicitation round trip through tasks/update.
	ct = callForTask(t, ctx, cs, "elicit_task", map[string]any{"question": "Name?"})
	g, _ = sdkGet(t, ctx, cs, ct.TaskID)
	if g.Status != modern.StatusInputRequired {
		t.Fatalf("elicit status %s", g.Status)
	}
	resp := map[string]json.RawMessage{}
	for _, k := range g.InputRequests.Keys() {
		resp[k] = json.RawMessage(`{"action":"accept","content":{"answer":"Ada"}}`)
	}
	ack, err := mcp.CallCustomMethod[*UpdateParams, *taskResult](ctx, cs, "tasks/update", &UpdateParams{TaskID: ct.TaskID, InputResponses: resp})
	if err != nil {
		t.Fatal(err)
	}
	v.Check(t, schemacheck.Ext, "UpdateTaskResult", ack.Raw)
	g, _ = sdkGet(t, ctx, cs, ct.TaskID)
	if text, _ := textOf(t, g.Result); text != "Ada" {
		t.Errorf("elicit result %s", g.Result)
	}

	// Cancel.
	ct = callForTask(t, ctx, cs, "slow_task", map[string]any{"ms": 1000, "text": "x"})
	ack, err = mcp.CallCustomMethod[*TaskIDParams, *taskResult](ctx, cs, "tasks/cancel", &TaskIDParams{TaskID: ct.TaskID})
	if err != nil {
		t.Fatal(err)
	}
	v.Check(t, schemacheck.Ext, "CancelTaskResult", ack.Raw)
	if g, _ := sdkGet(t, ctx, cs, ct.TaskID); g.Status != modern.StatusCancelled {
		t.Errorf("after cancel: %s", g.Status)
	}

	// Unknown id: -32602 surfaces as a *jsonrpc.Error (M-60).
	_, err = mcp.CallCustomMethod[*TaskIDParams, *taskResult](ctx, cs, "tasks/get", &TaskIDParams{TaskID: "nope"})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != rpc.CodeInvalidParams {
		t.Errorf("unknown id: %v", err)
	}
}

// TestGoSDKClientWithoutMcpNameIsRejected shows why the RoundTripper is
// needed: go-sdk v1.8.0 does not set Mcp-Name for tasks/* (M-32).
func TestGoSDKClientWithoutMcpNameIsRejected_M67(t *testing.T) {
	_, _, url := startServer(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	cs := connectHTTP(t, ctx, url, newSDKClient(t, false), http.DefaultTransport)
	ct := callForTask(t, ctx, cs, "slow_task", map[string]any{"ms": 1000, "text": "x"})
	_, err := mcp.CallCustomMethod[*TaskIDParams, *taskResult](ctx, cs, "tasks/get", &TaskIDParams{TaskID: ct.TaskID})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != rpc.CodeHeaderMismatch {
		t.Errorf("tasks/get without Mcp-Name: %v, want -32020", err)
	}
}

func TestGoSDKClientWithoutExtension_M51(t *testing.T) {
	_, _, url := startServer(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "plain", Version: "1"}, nil)
	cs := connectHTTP(t, ctx, url, c, http.DefaultTransport)
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow_task", Arguments: map[string]any{"ms": 1, "text": "x"}})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != rpc.CodeMissingRequiredClientCapability {
		t.Fatalf("task tool without extension: %v, want -32021", err)
	}
	if caps, _, ok := modern.RequiredCapabilitiesOf(je); !ok || !caps.HasTasksExtension() {
		t.Errorf("data %s", je.Data)
	}
}

func TestGoSDKLegacyClientIsRefused_M44(t *testing.T) {
	_, _, url := startServer(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "legacy", Version: "1"}, nil)
	_, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil {
		t.Fatal("a legacy (2025-11-25) go-sdk client connected to a modern-only server")
	}
	if !strings.Contains(err.Error(), ProtocolVersion) {
		t.Errorf("the refusal does not name %s: %v", ProtocolVersion, err)
	}
}
