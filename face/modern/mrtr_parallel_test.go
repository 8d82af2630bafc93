package modernface_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startParallelAsker serves a 2025-11-25 server whose synchronous tool
// "two_questions" asks two form elicitations at the same time on the
// tools/call stream and answers with both answers.
func startParallelAsker(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "parallel-asker", Version: "1"}, nil)
	type noArgs struct{}
	mcp.AddTool(srv, &mcp.Tool{Name: "two_questions", Description: "asks two questions at once"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			var wg sync.WaitGroup
			answers := make([]string, 2)
			errs := make([]error, 2)
			for i, field := range []string{"first", "second"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: field + "?",
						RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{field: map[string]any{"type": "string"}}}})
					if err != nil {
						errs[i] = err
						return
					}
					answers[i] = fmt.Sprint(res.Content[field])
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					return nil, nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(answers, "+")}}}, nil, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

// A legacy tool that asks two questions at once reaches the modern client as
// one MRTR round carrying both input requests (M-17: the client answers every
// one before retrying), not as two rounds of one question each; the retry
// with both answers completes the call.
func TestParallelQuestionsOneRound_M17(t *testing.T) {
	e := newEnvAt(t, startParallelAsker(t))
	ctx := ctxT(t)
	call := map[string]any{"name": "two_questions", "arguments": map[string]any{}}
	r := e.rpc(ctx, "tools/call", call, withoutTasks).ok(t)
	reqs, _ := r["inputRequests"].(map[string]any)
	state, _ := r["requestState"].(string)
	if r["resultType"] != "input_required" || len(reqs) != 2 || state == "" {
		t.Fatalf("round 1: %v, want one InputRequiredResult with both questions", r)
	}
	answers := map[string]any{}
	var asked []string
	for k, v := range reqs {
		m, _ := v.(map[string]any)
		params, _ := m["params"].(map[string]any)
		q, _ := params["message"].(string)
		field := strings.TrimSuffix(q, "?")
		asked = append(asked, field)
		answers[k] = map[string]any{"action": "accept", "content": map[string]any{field: field + "-answer"}}
	}
	sort.Strings(asked)
	if strings.Join(asked, ",") != "first,second" {
		t.Fatalf("round 1 asks %v, want first and second", asked)
	}
	retry := map[string]any{"name": "two_questions", "arguments": map[string]any{}, "requestState": state, "inputResponses": answers}
	done := e.rpc(ctx, "tools/call", retry, withoutTasks).ok(t)
	if done["resultType"] != "complete" || resultTextOf(done) != "first-answer+second-answer" {
		t.Fatalf("retry: %v, want the tool's answer with both inputs", done)
	}
}
