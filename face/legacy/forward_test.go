package legacyface_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// customUpstream is a plain go-sdk 2026-07-28 server with what the demo
// lacks: an MRTR tool, a tool that reports progress and logs, prompts,
// resources (with subscriptions) and completions.
type customUpstream struct {
	srv *mcp.Server
	rec *recorder
	url string
}

func startCustomUpstream(t *testing.T) *customUpstream {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "custom-upstream", Version: "1"}, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{"2026-07-28"},
		CompletionHandler: func(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{req.Params.Argument.Value + "-one", req.Params.Argument.Value + "-two"}}}, nil
		},
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	// ask_name needs an answer from the client first (MRTR, M-17/M-18).
	mcp.AddTool(srv, &mcp.Tool{Name: "ask_name", Description: "asks the client's name"},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if r, ok := req.Params.InputResponses["name"]; ok {
				if req.Params.RequestState != "state-1" {
					return nil, nil, fmt.Errorf("requestState %q was not echoed", req.Params.RequestState)
				}
				er, _ := r.(*mcp.ElicitResult)
				if er == nil {
					return nil, nil, fmt.Errorf("not an ElicitResult: %T", r)
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("Hello, %v", er.Content["name"])}}}, nil, nil
			}
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{
					Message: "What is your name?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}},
						"required": []string{"name"}},
				}},
				RequestState: "state-1",
			}, nil, nil
		})
	// chatty reports progress on the caller's token and logs at info.
	mcp.AddTool(srv, &mcp.Tool{Name: "chatty", Description: "progress and logs"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "half way"})
			}
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "chatty", Data: "working on it"})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done talking"}}}, nil, nil
		})
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Description: "a greeting", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Hello " + req.Params.Arguments["who"]}}}}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "test://doc", Name: "doc", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "the doc"}}}, nil
		})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "item"}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	rec := &recorder{next: h}
	mux := http.NewServeMux()
	mux.Handle("/mcp", rec)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	t.Cleanup(func() { checkUpstreamRequests(t, rec.all()) })
	return &customUpstream{srv: srv, rec: rec, url: hs.URL + "/mcp"}
}

// An upstream MRTR input_required on an ordinary request becomes a
// real elicitation/create on the request's own stream (no related-task
// _meta: there is no task); the request is retried upstream with the answer,
// the echoed requestState and a new JSON-RPC id.
func TestMRTROnOrdinaryRequest(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startCustomUpstream(t)
	br := startBridge(t, nil, legacyface.Config{Upstream: up.url})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	c.setHandler(func(method string, params json.RawMessage) (any, *rpc.Error) {
		if method != "elicitation/create" || bytes.Contains(params, []byte(legacyRelatedTask)) {
			return nil, rpc.Errorf(rpc.CodeInvalidParams, "unexpected %s %s", method, params)
		}
		return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, nil
	})
	r := c.call(ctx, "tools/call", map[string]any{"name": "ask_name", "arguments": map[string]any{}})
	if r.Err != nil || !bytes.Contains(r.Result, []byte("Hello, Ada")) {
		t.Fatalf("tools/call: %s", r.Envelope)
	}
	if len(r.Requests) != 1 {
		t.Errorf("elicitations on the stream: %s", r.Requests)
	}
	calls := up.rec.byMethod("tools/call")
	if len(calls) != 2 {
		t.Fatalf("upstream tools/call %d, want 2 (call and retry)", len(calls))
	}
	var first, retry struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
			RequestState   *string                    `json:"requestState"`
		} `json:"params"`
	}
	_ = json.Unmarshal(calls[0].Body, &first)
	_ = json.Unmarshal(calls[1].Body, &retry)
	if bytes.Equal(first.ID, retry.ID) || retry.Params.RequestState == nil || *retry.Params.RequestState != "state-1" ||
		!bytes.Contains(retry.Params.InputResponses["name"], []byte(`"Ada"`)) {
		t.Errorf("retry: %s", calls[1].Body)
	}

	// The same call task-augmented: the MRTR round runs inside tools/call,
	// then the synchronous answer becomes a synthesized task.
	r = c.call(ctx, "tools/call", map[string]any{"name": "ask_name", "arguments": map[string]any{}, "task": map[string]any{}})
	id := taskIDOf(t, r)
	res := c.call(ctx, "tasks/result", map[string]any{"taskId": id})
	if res.Err != nil || !bytes.Contains(res.Result, []byte("Hello, Ada")) {
		t.Errorf("tasks/result: %s", res.Envelope)
	}
	c.checkReceived(t)
}

// Progress (on the client's own token) and log notifications of an
// upstream request reach the client on the request's stream; the log level
// set by logging/setLevel was stamped upstream.
func TestProgressAndLogNotifications(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startCustomUpstream(t)
	br := startBridge(t, nil, legacyface.Config{Upstream: up.url})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	c.call(ctx, "logging/setLevel", map[string]any{"level": "info"})
	r := c.call(ctx, "tools/call", map[string]any{"name": "chatty", "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": 77}})
	if r.Err != nil || !bytes.Contains(r.Result, []byte("done talking")) {
		t.Fatalf("tools/call: %s", r.Envelope)
	}
	var sawProgress, sawLog bool
	for _, n := range r.Notes {
		var m struct {
			Method string `json:"method"`
			Params struct {
				ProgressToken any    `json:"progressToken"`
				Message       string `json:"message"`
				Data          any    `json:"data"`
			} `json:"params"`
		}
		_ = json.Unmarshal(n, &m)
		switch m.Method {
		case "notifications/progress":
			sawProgress = m.Params.ProgressToken == float64(77) && m.Params.Message == "half way"
		case "notifications/message":
			sawLog = m.Params.Data == "working on it"
		}
		if bytes.Contains(n, []byte("subscriptionId")) {
			t.Errorf("2026-only _meta leaked: %s", n)
		}
	}
	if !sawProgress || !sawLog {
		t.Errorf("notifications on the stream: %s", r.Notes)
	}
	c.checkReceived(t)
}

// Prompts, resources and completions are carried across the eras;
// every answer is a valid 2025-11-25 result without 2026-only members.
func TestForwardedMethods(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startCustomUpstream(t)
	br := startBridge(t, nil, legacyface.Config{Upstream: up.url})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	v := schemacheck.Load(t)
	for _, step := range []struct {
		method string
		params any
		def    string
		want   string
	}{
		{"prompts/list", nil, "ListPromptsResult", `"greet"`},
		{"prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"who": "Bob"}}, "GetPromptResult", "Hello Bob"},
		{"resources/list", nil, "ListResourcesResult", `"test://doc"`},
		{"resources/templates/list", nil, "ListResourceTemplatesResult", `"test://items/{id}"`},
		{"resources/read", map[string]any{"uri": "test://doc"}, "ReadResourceResult", "the doc"},
		{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greet"}, "argument": map[string]any{"name": "who", "value": "Bo"}}, "CompleteResult", "Bo-one"},
	} {
		r := c.call(ctx, step.method, step.params)
		if r.Err != nil || !bytes.Contains(r.Result, []byte(step.want)) {
			t.Errorf("%s: %s", step.method, r.Envelope)
			continue
		}
		v.Check(t, schemacheck.Legacy, step.def, r.Result)
		for _, k := range []string{`"resultType"`, `"ttlMs"`, `"cacheScope"`, `serverInfo`} {
			if bytes.Contains(r.Result, []byte(k)) {
				t.Errorf("%s: 2026-only %s leaked: %s", step.method, k, r.Result)
			}
		}
	}
	// resources/read of an unknown resource: the upstream's 2026 -32602 is
	// the 2025-11-25 -32002 (the code legacy clients expect).
	r := c.call(ctx, "resources/read", map[string]any{"uri": "test://missing"})
	if r.Err == nil || r.Err.Code != rpc.CodeLegacyResourceNotFound {
		t.Errorf("resources/read of a missing resource: %s", r.Envelope)
	}
	c.checkReceived(t)
}

// resources/subscribe opens an upstream subscriptions/listen with the
// session's resource URIs; the upstream's notifications/resources/updated
// reaches the legacy client (on its GET stream); resources/unsubscribe
// closes it.
func TestResourceSubscriptionsViaListen(t *testing.T) {
	ctx := ctxT(t, 20*time.Second)
	up := startCustomUpstream(t)
	br := startBridge(t, nil, legacyface.Config{Upstream: up.url})
	c := newRawClient(t, br.url)
	c.initialize(ctx, nil)
	notes := make(chan json.RawMessage, 8)
	opened := make(chan struct{})
	go c.listenGET(ctx, notes, opened)
	<-opened
	if r := c.call(ctx, "resources/subscribe", map[string]any{"uri": "test://doc"}); r.Err != nil {
		t.Fatalf("subscribe: %s", r.Envelope)
	}
	listens := up.rec.byMethod("subscriptions/listen")
	if len(listens) != 1 || !bytes.Contains(listens[0].Body, []byte(`"resourceSubscriptions":["test://doc"]`)) {
		t.Fatalf("upstream listen: %v", listens)
	}
	if err := up.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "test://doc"}); err != nil {
		t.Fatal(err)
	}
	v := schemacheck.Load(t)
	select {
	case m := <-notes:
		v.Check(t, schemacheck.Legacy, "ResourceUpdatedNotification", m)
		if !bytes.Contains(m, []byte(`"test://doc"`)) || bytes.Contains(m, []byte("subscriptionId")) {
			t.Errorf("updated notification %s", m)
		}
	case <-ctx.Done():
		t.Fatal("no notifications/resources/updated")
	}
	if r := c.call(ctx, "resources/unsubscribe", map[string]any{"uri": "test://doc"}); r.Err != nil {
		t.Fatalf("unsubscribe: %s", r.Envelope)
	}
}
