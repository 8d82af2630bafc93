package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// `bridge serve --store rediss://... --redis-ca --redis-cert --redis-key`
// against a redis-server that listens only for TLS and requires a client
// certificate: the bridge starts, serves a legacy client's initialize and
// tools/call and keeps the session there; `bridge sessions|tasks list` with
// the same flags read it; without the client certificate the admin view is
// refused with an error that says so, and so is serve with the wrong CA.
func TestServeRedisStoreTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	files := redistest.NewTLSFiles(t)
	srv := redistest.StartTLS(t, files)
	prefix := srv.Prefix(t)
	if !strings.HasPrefix(srv.URL, "rediss://127.0.0.1:") {
		t.Fatalf("TLS server URL %q", srv.URL)
	}
	tlsArgs := []string{"--store", srv.URL, "--redis-prefix", prefix,
		"--redis-ca", files.CA, "--redis-cert", files.ClientCert, "--redis-key", files.ClientKey}

	url, _, stop := startServe(ctx, t, false, append([]string{"--upstream", startDemoUpstream(t)}, tlsArgs...)...)
	cs, err := legacyClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("legacy initialize through a bridge on TLS Redis: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over tls"}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("tools/call echo = %+v, %v", res, err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "over tls") {
		t.Fatalf("tools/call echo content = %#v", res.Content[0])
	}

	// A task written by another replica over the same TLS settings.
	rs, err := sessionmap.OpenRedis(ctx, sessionmap.RedisConfig{URL: srv.URL, Prefix: prefix,
		CAFile: files.CA, CertFile: files.ClientCert, KeyFile: files.ClientKey})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	task := sessionmap.Task{ID: sessionmap.NewTaskID(), Scope: sessionmap.Scope{Session: cs.ID()},
		Direction: sessionmap.LegacyToModern, Origin: sessionmap.OriginUpstreamTask, Method: "tools/call", ToolName: "slow_task"}
	if err := rs.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}

	out := mustRun(t, append([]string{"sessions", "list", "--json"}, tlsArgs...)...)
	var sessions []sessionmap.Session
	if json.Unmarshal([]byte(out), &sessions) != nil ||
		!slices.ContainsFunc(sessions, func(s sessionmap.Session) bool { return s.ID == cs.ID() }) {
		t.Fatalf("sessions list over TLS: want the client's session %s written by serve\n%s", cs.ID(), out)
	}
	if got := taskIDs(t, mustRun(t, append([]string{"tasks", "list", "--json"}, tlsArgs...)...)); len(got) != 1 || got[0] != task.ID {
		t.Fatalf("tasks list over TLS = %v, want [%s]", got, task.ID)
	}
	if out := mustRun(t, append([]string{"tasks", "show"}, append(tlsArgs, task.ID)...)...); !strings.Contains(out, "tools/call slow_task") {
		t.Fatalf("tasks show over TLS:\n%s", out)
	}
	// --redis-tls-server-name applies to the views too: a name the
	// certificate does not carry is refused, one it carries works.
	if _, err := runBridge(t, append([]string{"tasks", "list", "--redis-tls-server-name", "redis.wrong.example"}, tlsArgs...)...); err == nil ||
		!strings.Contains(err.Error(), "redis.wrong.example") || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("tasks list with a wrong --redis-tls-server-name = %v", err)
	}
	if got := taskIDs(t, mustRun(t, append([]string{"tasks", "list", "--json", "--redis-tls-server-name", "localhost"}, tlsArgs...)...)); len(got) != 1 {
		t.Fatalf("tasks list --redis-tls-server-name localhost = %v", got)
	}
	// The server requires a client certificate: CA alone is refused.
	noCert := []string{"tasks", "list", "--store", srv.URL, "--redis-prefix", prefix, "--redis-ca", files.CA}
	if _, err := runBridge(t, noCert...); err == nil || !strings.Contains(err.Error(), "certificate required") ||
		!strings.Contains(err.Error(), srv.Addr) {
		t.Fatalf("tasks list without --redis-cert = %v, want a refusal naming the missing certificate and the server", err)
	}
	// serve with a CA that did not sign the server's certificate does not
	// start, and says why.
	wrongCA := []string{"serve", "--upstream", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--store", srv.URL, "--redis-prefix", prefix, "--redis-ca", files.OtherCA, "--redis-cert", files.ClientCert, "--redis-key", files.ClientKey}
	if out, err := runBridge(t, wrongCA...); err == nil || !strings.Contains(err.Error(), "unknown authority") ||
		!strings.Contains(err.Error(), srv.Addr) || strings.Contains(err.Error()+out, "PRIVATE KEY") {
		t.Fatalf("serve with the wrong --redis-ca = %v (output %q), want a refusal naming the certificate problem and the server", err, out)
	}
	cs.Close()
	stop()
}
