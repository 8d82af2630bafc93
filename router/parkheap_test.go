package router_test

import (
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/router"
)

// A legacy tasks/result that parks behind the whole edge and router keeps
// only what answering it needs: not the body its message was read from,
// nor the router's decoded message (the wire meter's record keeps the
// method, id and eras it meters the answer by). Each wait's body here
// carries 256 KiB of whitespace between its members, so a parked wait that
// still held its body (or the decoded message pointing into it) would keep
// more than 256 KiB. Without it a wait keeps its records, a few KiB, but
// this process's live heap also moves with its in-process upstream and
// client (10–56 KiB per wait over 200 waits, measured), so the bound sits
// between that noise and the body; the records themselves are bounded by
// the face's and the router's focused heap tests.
func TestParkedWaitThroughRouterKeepsNoBody(t *testing.T) {
	const (
		n       = 200
		pad     = 256 << 10
		perWait = 96 << 10 // bound on the live heap a parked wait adds: well under its body
	)
	ctx := ctxT(t)
	br := startBridge(t, router.Config{Upstream: startModern(t)})
	c := newLegacyClient(t, br.url, "parkheap-app")
	mustOK(t, "initialize", c.initialize(ctx))
	ids := make([]string, n)
	for i := range ids {
		created := mustOK(t, "tools/call task", c.call(ctx, "tools/call", map[string]any{
			"name": "slow_task", "arguments": map[string]any{"ms": 600000, "text": fmt.Sprintf("t%d", i)}, "task": map[string]any{}}))
		ids[i] = field(t, created, "task.taskId")
	}
	lb := router.LegacyBridge(br.srv)
	addr := strings.TrimPrefix(br.base, "http://")
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	for i := range n {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s"method":"tasks/result","params":{"taskId":%q}}`, i+1, strings.Repeat(" ", pad), ids[i])
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n%s",
			addr, c.sid, len(body), body)
	}
	for {
		moved := lb.ParkedMoved()
		if lb.ParkedWaits() == n {
			break
		}
		select {
		case <-moved:
		case <-ctx.Done():
			t.Fatalf("%d of %d waits parked: %v", lb.ParkedWaits(), n, ctx.Err())
		}
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	live := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d parked waits through the router, %d B bodies: %d B live heap each", n, len(ids[0])+pad, live)
	limit := int64(perWait)
	if router.RaceBuild {
		limit *= 2 // the race detector's bookkeeping
	}
	if live > limit {
		t.Errorf("a parked wait through the router keeps %d B of live heap, want ≤ %d (its %d B body let go)", live, limit, pad)
	}
}
