package modernface_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
)

func TestSmokeTaskLifecycle(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	v := schemacheck.Load(t)

	d := e.rpc(ctx, "server/discover", nil, withTasks)
	v.Check(t, schemacheck.Modern, "DiscoverResult", d.resultJSON(t))
	caps := d.ok(t)["capabilities"].(map[string]any)
	if _, ok := caps["extensions"].(map[string]any)["io.modelcontextprotocol/tasks"]; !ok || caps["tasks"] != nil {
		t.Fatalf("discover capabilities %v", caps)
	}

	tl := e.rpc(ctx, "tools/list", nil, withTasks)
	v.Check(t, schemacheck.Modern, "ListToolsResult", tl.resultJSON(t))
	if strings.Contains(string(tl.body), `"execution"`) {
		t.Fatalf("tools/list leaks taskSupport: %s", tl.body)
	}

	g := e.rpc(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "World"}}, withTasks)
	v.Check(t, schemacheck.Modern, "CallToolResult", g.resultJSON(t))
	if g.ok(t)["resultType"] != "complete" {
		t.Fatalf("sync call %s", g.body)
	}

	c := e.rpc(ctx, "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 1}}, withTasks)
	v.Check(t, schemacheck.Ext, "CreateTaskResult", c.resultJSON(t))
	id, _ := c.ok(t)["taskId"].(string)
	if c.result["resultType"] != "task" || id == "" {
		t.Fatalf("create %s", c.body)
	}
	got := e.rpc(ctx, "tasks/get", map[string]any{"taskId": id}, withTasks)
	v.Check(t, schemacheck.Ext, "GetTaskResult", got.resultJSON(t))
	done := e.pollUntil(ctx, id, withTasks, terminal)
	if done["status"] != "completed" || done["result"] == nil {
		t.Fatalf("final %v", done)
	}
	b, _ := json.Marshal(done)
	v.Check(t, schemacheck.Ext, "GetTaskResult", b)
}

// Progress notifications of a synchronous call reach the modern request's
// stream with the client's own token (tasks get none, M-35).
func TestProgressRelayedOnSyncCalls(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := ctxT(t)
	r := e.rpc(ctx, "tools/call", map[string]any{"name": "progress_sync", "arguments": map[string]any{"steps": 2},
		"_meta": map[string]any{"progressToken": "p-7"}}, withTasks)
	r.ok(t)
	v := schemacheck.Load(t)
	var n int
	for _, m := range r.notifications {
		var msg struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(m, &msg)
		if msg.Method == "notifications/progress" {
			v.Check(t, schemacheck.Modern, "ProgressNotificationParams", msg.Params)
			if !strings.Contains(string(msg.Params), `"progressToken":"p-7"`) {
				t.Fatalf("progress with a foreign token: %s", msg.Params)
			}
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d progress notifications relayed, want 2 (notifications %s)", n, r.notifications)
	}
}
