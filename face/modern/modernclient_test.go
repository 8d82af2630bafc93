package modernface_test

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

	"github.com/tasksbridge/tasksbridge/modern"
)

// A modern (2026-07-28 + tasks extension) client written with go-sdk v1.8.0,
// as such a client must be built on it: pinned protocol version, the extension declared
// in its capabilities (sent per request), tasks/get|update|cancel as custom
// methods, a RoundTripper that adds Mcp-Name = taskId (which go-sdk does not),
// and a connection wrapper that keeps a CreateTaskResult alive through
// ClientSession.CallTool (which would drop it).

const createTaskKey = "tasksbridge.test/createTask"

type taskIDParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

type updateParams struct {
	mcp.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

type detailedTask struct {
	mcp.ResultBase
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          *int64          `json:"ttlMs"`
	PollIntervalMs *int64          `json:"pollIntervalMs,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          *jsonrpc.Error  `json:"error,omitempty"`
	InputRequests  map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests,omitempty"`
}

type ack struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
}

// mcpNameRT sets Mcp-Name = params.taskId on tasks/* requests (M-32).
type mcpNameRT struct{ next http.RoundTripper }

func (t mcpNameRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if m := r.Header.Get("Mcp-Method"); strings.HasPrefix(m, "tasks/") && r.GetBody != nil && r.Header.Get("Mcp-Name") == "" {
		rc, err := r.GetBody()
		if err == nil {
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
	return t.next.RoundTrip(r)
}

// taskPreserving moves a CreateTaskResult into the _meta of a CallToolResult.
type taskPreserving struct{ inner mcp.Transport }

func (t taskPreserving) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &taskPreservingConn{Connection: c}, nil
}

type taskPreservingConn struct{ mcp.Connection }

func (c *taskPreservingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil && resp.Error == nil && len(resp.Result) > 0 {
		var probe struct {
			ResultType string `json:"resultType"`
		}
		if json.Unmarshal(resp.Result, &probe) == nil && probe.ResultType == "task" {
			wrapped, _ := json.Marshal(map[string]any{
				"resultType": "complete", "content": []any{},
				"_meta": map[string]any{createTaskKey: json.RawMessage(resp.Result)},
			})
			resp.Result = wrapped
		}
	}
	return msg, err
}

// modernClient is a connected go-sdk client session.
type modernClient struct {
	cs *mcp.ClientSession
}

func connectModern(t *testing.T, ctx context.Context, url string) *modernClient {
	t.Helper()
	// It answers sampling task input through tasks/update, so it declares
	// sampling too (M-39: input requests go only to declaring requests).
	caps := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}, Sampling: &mcp.SamplingCapabilities{}}
	caps.AddExtension(modern.TasksExtensionID, nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-modern-client", Version: "1"}, &mcp.ClientOptions{
		Capabilities: caps,
		Logger:       quietLogger(),
		// Task input goes through tasks/update; MRTR rounds of ordinary
		// calls are answered by this handler.
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Alice", "answer": "Alice"}}, nil
		},
	})
	for _, m := range []string{"tasks/get", "tasks/cancel"} {
		if err := mcp.AddSendingCustomMethod[*taskIDParams, *detailedTask](client, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := mcp.AddSendingCustomMethod[*updateParams, *ack](client, "tasks/update"); err != nil {
		t.Fatal(err)
	}
	tr := &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: mcpNameRT{http.DefaultTransport}}}
	cs, err := client.Connect(ctx, taskPreserving{tr}, &mcp.ClientSessionOptions{ProtocolVersion: modern.ProtocolVersion})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != modern.ProtocolVersion {
		t.Fatalf("negotiated %s, want %s (server/discover)", got, modern.ProtocolVersion)
	}
	if _, ok := cs.InitializeResult().Capabilities.Extensions[modern.TasksExtensionID]; !ok {
		t.Fatalf("bridge did not advertise the tasks extension: %+v", cs.InitializeResult().Capabilities)
	}
	return &modernClient{cs: cs}
}

// callTool returns the synchronous result, or the task id of a task.
func (m *modernClient) callTool(t *testing.T, ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	if raw, ok := res.Meta[createTaskKey]; ok {
		b, _ := json.Marshal(raw)
		var ct struct {
			TaskID string `json:"taskId"`
		}
		if err := json.Unmarshal(b, &ct); err != nil || ct.TaskID == "" {
			t.Fatalf("CreateTaskResult %s", b)
		}
		return nil, ct.TaskID
	}
	return res, ""
}

func (m *modernClient) get(t *testing.T, ctx context.Context, id string) *detailedTask {
	t.Helper()
	d, err := mcp.CallCustomMethod[*taskIDParams, *detailedTask](ctx, m.cs, "tasks/get", &taskIDParams{TaskID: id})
	if err != nil {
		t.Fatalf("tasks/get %s: %v", id, err)
	}
	if d.ResultType != "complete" || d.TaskID != id {
		t.Fatalf("tasks/get %s: resultType %q taskId %q", id, d.ResultType, d.TaskID)
	}
	return d
}

// waitFor polls tasks/get at the task's pollIntervalMs (M-24) until cond.
func (m *modernClient) waitFor(t *testing.T, ctx context.Context, id string, cond func(*detailedTask) bool) *detailedTask {
	t.Helper()
	for {
		d := m.get(t, ctx, id)
		if cond(d) {
			return d
		}
		wait := 50 * time.Millisecond
		if d.PollIntervalMs != nil && *d.PollIntervalMs > 0 {
			wait = time.Duration(*d.PollIntervalMs) * time.Millisecond
		}
		select {
		case <-ctx.Done():
			t.Fatalf("task %s: %s never reached the expected state", id, d.Status)
		case <-time.After(wait):
		}
	}
}

func isTerminal(d *detailedTask) bool {
	return d.Status == "completed" || d.Status == "failed" || d.Status == "cancelled"
}

func (m *modernClient) update(t *testing.T, ctx context.Context, id string, responses map[string]json.RawMessage) {
	t.Helper()
	a, err := mcp.CallCustomMethod[*updateParams, *ack](ctx, m.cs, "tasks/update", &updateParams{TaskID: id, InputResponses: responses})
	if err != nil || a.ResultType != "complete" {
		t.Fatalf("tasks/update: %v %+v", err, a)
	}
}

func (m *modernClient) cancel(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	if _, err := mcp.CallCustomMethod[*taskIDParams, *detailedTask](ctx, m.cs, "tasks/cancel", &taskIDParams{TaskID: id}); err != nil {
		t.Fatalf("tasks/cancel: %v", err)
	}
}

func resultText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

func rpcCode(err error) int64 {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}
