package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// limitAnswer is a JSON-RPC answer read off a raw POST.
type limitAnswer struct {
	Error *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	Result json.RawMessage `json:"result"`
}

// rawPost is one raw POST to the bridge (sid "": no session). An
// application/json answer is read and decoded; an event stream is left open
// until the test ends, so a wait keeps its place (ans is then nil).
func rawPost(ctx context.Context, t *testing.T, url, sid string, hdr map[string]string, body string) (*http.Response, *limitAnswer) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Cleanup(func() { resp.Body.Close() })
		return resp, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var a limitAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("HTTP %d answer %q: %v", resp.StatusCode, b, err)
	}
	return resp, &a
}

const rawInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"limits","version":"1"}}}`

func slowCall(id int, task bool) string {
	tk := ""
	if task {
		tk = `,"task":{"ttl":60000}`
	}
	return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"slow_task","arguments":{"ms":60000,"text":"x"}` + tk + `}}`
}

// --audit-log once replaced the legacy face's configuration instead of
// adding to it, so --max-sessions, --max-tasks-per-principal and
// --max-waiters-per-principal were silently dropped (--max-sessions 5
// accepted 8 of 8). With --audit-log on, each of them still refuses.
func TestServeAuditLogKeepsLimits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	lines, _, done := runApp(runCtx, t, nil, "serve", "--upstream", startDemoUpstream(t), "--upstream-era", "modern",
		"--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--log-level", "error",
		"--audit-log", filepath.Join(t.TempDir(), "audit.log"),
		"--max-sessions", "5", "--max-tasks-per-principal", "1", "--max-waiters-per-principal", "2", "--session-cache", "2")
	url := awaitLine(ctx, t, lines, done, "bridge: ")
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve returned %v", err)
		}
	}()

	var sids []string
	for i := range 6 {
		resp, a := rawPost(ctx, t, url, "", nil, rawInitialize)
		if i < 5 {
			if resp.StatusCode != http.StatusOK || a == nil || a.Error != nil || resp.Header.Get("Mcp-Session-Id") == "" {
				t.Fatalf("initialize %d: HTTP %d, %+v", i+1, resp.StatusCode, a)
			}
			sids = append(sids, resp.Header.Get("Mcp-Session-Id"))
			continue
		}
		if resp.StatusCode != http.StatusServiceUnavailable || a == nil || a.Error == nil || !strings.Contains(a.Error.Message, "--max-sessions") ||
			a.Error.Code != rpc.CodeLimitReached || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("6th initialize with --max-sessions 5: HTTP %d, %+v; want 503 naming --max-sessions", resp.StatusCode, a)
		}
	}

	sid := sids[0]
	// A task to wait on (the call's place is handed back when it answers).
	resp, a := rawPost(ctx, t, url, sid, nil, slowCall(2, true))
	var created struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if resp.StatusCode != http.StatusOK || a == nil || a.Error != nil || json.Unmarshal(a.Result, &created) != nil || created.Task.TaskID == "" {
		t.Fatalf("task-augmented tools/call: HTTP %d, %+v", resp.StatusCode, a)
	}
	// A plain tools/call on a task tool waits for its task: one call and
	// one waiter of this session's principal, held while its stream is open.
	if resp, a := rawPost(ctx, t, url, sid, nil, slowCall(3, false)); a != nil {
		t.Fatalf("plain tools/call on a task tool: HTTP %d, %+v; want an open event stream", resp.StatusCode, a)
	}
	resp, a = rawPost(ctx, t, url, sid, nil, slowCall(4, true))
	if a == nil || a.Error == nil || !strings.Contains(a.Error.Message, "--max-tasks-per-principal") ||
		a.Error.Code != rpc.CodeLimitReached || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("2nd concurrent tools/call with --max-tasks-per-principal 1: HTTP %d, %+v; want a refusal naming the flag", resp.StatusCode, a)
	}
	// A second waiter fits (limit 2), a third does not.
	result := `{"jsonrpc":"2.0","id":5,"method":"tasks/result","params":{"taskId":"` + created.Task.TaskID + `"}}`
	if resp, a := rawPost(ctx, t, url, sid, nil, result); a != nil {
		t.Fatalf("tasks/result, the 2nd waiter: HTTP %d, %+v; want an open event stream", resp.StatusCode, a)
	}
	resp, a = rawPost(ctx, t, url, sid, nil, result)
	if a == nil || a.Error == nil || !strings.Contains(a.Error.Message, "--max-waiters-per-principal") ||
		a.Error.Code != rpc.CodeLimitReached || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("3rd waiter with --max-waiters-per-principal 2: HTTP %d, %+v; want a refusal naming the flag", resp.StatusCode, a)
	}
}
