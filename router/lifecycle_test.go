package router_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/router"
)

// bodyUntil polls url until its body contains want (or ctx ends) and
// returns the last status and body: the readiness verdict is cached for a
// moment, so a change shows on a later probe.
func bodyUntil(t *testing.T, ctx context.Context, url, want string) (int, string) {
	t.Helper()
	for {
		code, body := get(t, url)
		if strings.Contains(body, want) {
			return code, body
		}
		select {
		case <-ctx.Done():
			return code, body
		case <-time.After(100 * time.Millisecond): // a prober's period
		}
	}
}

// /readyz means "this replica can serve": 200 while the upstream is down
// (the body says so, tasksbridge_upstream_up is 0, /healthz?verbose says
// so and /healthz stays 200), 503 "draining" once Drain is called. The
// store's failure is the other 503 (TestRedisStoreOutage).
func TestReadyzMeansThisReplicaCanServe(t *testing.T) {
	ctx := ctxT(t)
	up := newSwitchable(t, modernHandler(t))
	br := startBridge(t, router.Config{Upstream: up.url, ProbeTimeout: 5 * time.Second})

	if code, body := get(t, br.base+"/readyz"); code != http.StatusOK || !strings.Contains(body, "upstream: reachable (era modern)") {
		t.Fatalf("/readyz with the upstream up: %d %q", code, body)
	}
	if n, ok := sample(families(t, scrape(t, br.base+"/metrics")), "tasksbridge_upstream_up"); !ok || n != 1 {
		t.Errorf("tasksbridge_upstream_up with the upstream up: %v (exported %v), want 1", n, ok)
	}

	up.set(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream restarting", http.StatusBadGateway)
	}))
	code, body := bodyUntil(t, ctx, br.base+"/readyz", "unreachable")
	if code != http.StatusOK || !strings.Contains(body, "ready\n") || !strings.Contains(body, "upstream: unreachable") {
		t.Fatalf("/readyz with the upstream down: %d %q, want 200 naming the upstream unreachable", code, body)
	}
	if n, ok := sample(families(t, scrape(t, br.base+"/metrics")), "tasksbridge_upstream_up"); !ok || n != 0 {
		t.Errorf("tasksbridge_upstream_up with the upstream down: %v (exported %v), want 0", n, ok)
	}
	if code, body := get(t, br.base+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz with the upstream down: %d %q", code, body)
	}
	if code, body := get(t, br.base+"/healthz?verbose"); code != http.StatusOK || !strings.Contains(body, "upstream: unreachable") {
		t.Errorf("/healthz?verbose with the upstream down: %d %q", code, body)
	}

	br.srv.Drain()
	if code, body := get(t, br.base+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "draining") {
		t.Errorf("/readyz while draining: %d %q, want 503 draining", code, body)
	}
	if code, body := get(t, br.base+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz while draining: %d %q, want 200 (the process is up)", code, body)
	}
}

// drainPost sends body to /mcp and returns the status, Retry-After and the
// JSON-RPC error answer.
func drainPost(t *testing.T, url, body string) (int, string, string, string, int64) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var msg struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	b, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(b, &msg); err != nil {
		t.Fatalf("answer while draining is not JSON-RPC: %q", b)
	}
	return res.StatusCode, res.Header.Get("Retry-After"), string(msg.ID), msg.Error.Message, msg.Error.Code
}

// While draining, new requests get HTTP 503 with Retry-After and a
// JSON-RPC error a client can act on, with its own id (null for a
// notification or a body without one), while a blocked tasks/result that
// was already waiting is still served: it gets its task's result.
func TestDrainRefusesNewRequestsServesWaits(t *testing.T) {
	ctx := ctxT(t)
	br := startBridge(t, router.Config{Upstream: startModern(t)})
	c := newLegacyClient(t, br.url, "drain-test")
	mustOK(t, "initialize", c.initialize(ctx))
	r := c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 1500, "text": "done"}, "task": map[string]any{}})
	mustOK(t, "create", r)
	taskID := field(t, r.Result, "task.taskId")

	// The wait, by hand: once the stream's first bytes arrived its handler
	// is in flight.
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":41,"method":"tasks/result","params":{"taskId":%q}}`, taskID)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, br.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	rd := bufio.NewReader(res.Body)
	if _, err := rd.ReadString('\n'); err != nil {
		t.Fatalf("wait stream: %v", err)
	}

	br.srv.Drain()
	for _, tc := range []struct{ body, id string }{
		{`{"jsonrpc":"2.0","id":"req-7","method":"tools/list"}`, `"req-7"`},
		{`{"jsonrpc":"2.0","id":12,"method":"tasks/get","params":{"taskId":"x"}}`, `12`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `null`},
		{`not json`, `null`},
	} {
		code, retry, id, msg, rpcCode := drainPost(t, br.url, tc.body)
		if code != http.StatusServiceUnavailable || retry == "" || id != tc.id || rpcCode != -32603 ||
			!strings.Contains(msg, "shutting down") || !strings.Contains(msg, "retry the request") {
			t.Errorf("%s while draining: HTTP %d Retry-After %q id %s error %d %q", tc.body, code, retry, id, rpcCode, msg)
		}
	}

	rest, err := io.ReadAll(rd)
	if err != nil {
		t.Fatalf("wait stream: %v", err)
	}
	if !bytes.Contains(rest, []byte(`"id":41,"result"`)) || !bytes.Contains(rest, []byte("done")) {
		t.Errorf("the wait in flight when draining started was not served: %s", rest)
	}
}
