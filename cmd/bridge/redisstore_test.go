package main

import (
	"context"
	"encoding/json"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// `bridge serve --store redis://...` keeps its sessions in Redis, where
// `bridge sessions|tasks --store` read them while the bridge runs; another
// --redis-prefix sees nothing.
func TestServeRedisStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := redistest.Start(t)
	prefix := srv.Prefix(t)
	// Not TASKSBRIDGE_STORE here: urfave/cli keeps an environment value in the
	// shared flag definitions, which would leak into the other in-process tests.
	url, _, stop := startServe(ctx, t, false, "--upstream", startDemoUpstream(t), "--store", srv.URL, "--redis-prefix", prefix)
	cs, err := legacyClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Fatalf("echo: %v", err)
	}

	// A task written by another replica sharing the prefix.
	rs, err := sessionmap.OpenRedis(ctx, sessionmap.RedisConfig{URL: srv.URL, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	task := sessionmap.Task{ID: sessionmap.NewTaskID(), Scope: sessionmap.Scope{Session: cs.ID()},
		Direction: sessionmap.LegacyToModern, Origin: sessionmap.OriginUpstreamTask, Method: "tools/call", ToolName: "slow_task"}
	if err := rs.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}

	out, err := runBridge(t, "sessions", "list", "--json", "--store", srv.URL, "--redis-prefix", prefix)
	var sessions []sessionmap.Session
	if err != nil || json.Unmarshal([]byte(out), &sessions) != nil ||
		!slices.ContainsFunc(sessions, func(s sessionmap.Session) bool { return s.ID == cs.ID() }) {
		t.Fatalf("sessions list --store = %v, want the client's session %s\n%s", err, cs.ID(), out)
	}
	if got := taskIDs(t, mustRun(t, "tasks", "list", "--json", "--store", srv.URL, "--redis-prefix", prefix)); len(got) != 1 || got[0] != task.ID {
		t.Fatalf("tasks list --store = %v, want [%s]", got, task.ID)
	}
	if out := mustRun(t, "tasks", "show", "--store", srv.URL, "--redis-prefix", prefix, task.ID); !strings.Contains(out, "tools/call slow_task") {
		t.Fatalf("tasks show --store:\n%s", out)
	}
	if got := taskIDs(t, mustRun(t, "tasks", "list", "--json", "--store", srv.URL, "--redis-prefix", prefix+"-other")); len(got) != 0 {
		t.Fatalf("another prefix lists %v", got)
	}
	if _, err := runBridge(t, "tasks", "show", "--store", srv.URL, "--redis-prefix", prefix, "nope"); err == nil ||
		!strings.Contains(err.Error(), "no live task") || !strings.Contains(err.Error(), prefix) {
		t.Fatalf("show unknown = %v", err)
	}
	cs.Close()
	stop()
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := runBridge(t, args...)
	if err != nil {
		t.Fatalf("bridge %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// A bad or unreachable --store is refused at start with the address and
// never the password.
func TestServeRedisStoreErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	_ = ln.Close()
	const password = "pw-never-shown"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--store", "redis://u:" + password + "@" + dead + "/0"}, dead},
		{[]string{"--store", "https://u:" + password + "@example.com/"}, "want redis://"},
		{[]string{"--store", "redis://" + dead + "/0", "--redis-prefix", "bad prefix"}, "prefix"},
		{[]string{"--store", "redis://" + dead + "/0", "--redis-wait-replicas", "-1"}, "wait replicas"},
	} {
		out, err := runBridge(t, append([]string{"serve", "--upstream", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error()+out, password) {
			t.Fatalf("serve %v = %v (output %q), want an error naming %q without the password", tc.args, err, out, tc.want)
		}
	}
	if _, err := runBridge(t, "tasks", "list", "--store", "redis://u:"+password+"@"+dead+"/0"); err == nil ||
		!strings.Contains(err.Error(), dead) || strings.Contains(err.Error(), password) {
		t.Fatalf("tasks list on a dead Redis = %v", err)
	}
}
