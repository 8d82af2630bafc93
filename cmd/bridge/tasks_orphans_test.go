package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// writeIntents fills a data dir as a bridge would have left it: a lost
// create (an intent without a task record), an old delivered create
// (intent and record), a create sent a moment ago (still under way), an
// undelivered task the bridge cancelled and one whose cancel failed.
func writeIntents(t *testing.T) (dir string, lost, failed string) {
	t.Helper()
	dir = t.TempDir()
	s, err := sessionmap.OpenBadger(dir, sessionmap.WithGCInterval(0),
		sessionmap.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sc := sessionmap.Scope{Principal: sessionmap.PrincipalFromAuthorization(adminTestSecret), Session: "sess-a"}
	old := time.Now().Add(-time.Hour)
	put := func(in sessionmap.Intent) string {
		t.Helper()
		in.ID, in.Scope, in.Upstream = sessionmap.NewTaskID(), sc, "http://127.0.0.1:9/mcp"
		if err := s.PutIntent(ctx, in); err != nil {
			t.Fatal(err)
		}
		return in.ID
	}
	lost = put(sessionmap.Intent{ToolName: "lost_tool", RequestID: "7", CreatedAt: old})
	delivered := put(sessionmap.Intent{ToolName: "delivered_tool", CreatedAt: old})
	if err := s.CreateTask(ctx, sessionmap.Task{ID: delivered, Scope: sc, Direction: sessionmap.LegacyToModern,
		Origin: sessionmap.OriginUpstreamTask, Method: "tools/call", ToolName: "delivered_tool", UpstreamTaskID: "up-d"}); err != nil {
		t.Fatal(err)
	}
	put(sessionmap.Intent{ToolName: "young_tool"})
	put(sessionmap.Intent{ToolName: "cancelled_tool", UpstreamTaskID: "up-c", Outcome: sessionmap.IntentCancelled})
	failed = put(sessionmap.Intent{ToolName: "stuck_tool", UpstreamTaskID: "up-f", Outcome: sessionmap.IntentCancelFailed})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, lost, failed
}

// `bridge tasks orphans` lists the lost create (candidate, no upstream id),
// and the undelivered tasks with their upstream ids and what the bridge did;
// not the delivered create nor the one still under way. Exit 1 while
// something may run upstream, 0 when only cancelled ones remain, 2 for a bad
// flag; never a credential or a whole principal hash.
func TestTasksOrphans(t *testing.T) {
	ctx := context.Background()
	dir, lost, failed := writeIntents(t)
	out, stderr, code := runBridgeCode(ctx, t, "tasks", "orphans", "--json", "--data-dir", dir)
	if code != 1 {
		t.Fatalf("tasks orphans: exit %d, want 1: %s\n%s", code, stderr, out)
	}
	var got []orphan
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	kinds := map[string]orphan{}
	for _, o := range got {
		kinds[o.Tool] = o
	}
	if len(got) != 3 || kinds["lost_tool"].Kind != "candidate" || kinds["lost_tool"].ID != lost ||
		kinds["lost_tool"].RequestID != "7" || kinds["lost_tool"].UpstreamTaskID != "" ||
		kinds["cancelled_tool"].Kind != "cancelled" || kinds["cancelled_tool"].UpstreamTaskID != "up-c" ||
		kinds["stuck_tool"].Kind != "cancel-failed" || kinds["stuck_tool"].ID != failed {
		t.Fatalf("orphans = %+v", got)
	}

	out, stderr, code = runBridgeCode(ctx, t, "tasks", "orphans", "--data-dir", dir)
	if code != 1 {
		t.Fatalf("table: exit %d: %s\n%s", code, stderr, out)
	}
	principal := sessionmap.PrincipalFromAuthorization(adminTestSecret)
	for _, want := range []string{"KIND", "candidate", "lost_tool", "up-f", "cancel-failed", principal[:12] + "…"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret") || strings.Contains(out, principal) || strings.Contains(out, "young_tool") || strings.Contains(out, "delivered_tool") {
		t.Fatalf("table shows a credential, a whole principal hash, or a create that is not orphaned:\n%s", out)
	}
	// --older-than 0 shows the create still under way too.
	out, _, _ = runBridgeCode(ctx, t, "tasks", "orphans", "--json", "--older-than", "0s", "--data-dir", dir)
	if !strings.Contains(out, "young_tool") || strings.Contains(out, "delivered_tool") {
		t.Fatalf("--older-than 0s:\n%s", out)
	}
	if _, stderr, code := runBridgeCode(ctx, t, "tasks", "orphans", "--older-than", "-1m", "--data-dir", dir); code != 2 {
		t.Fatalf("a negative --older-than: exit %d: %s", code, stderr)
	}
	empty := t.TempDir()
	s, err := sessionmap.OpenBadger(empty, sessionmap.WithGCInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	out, stderr, code = runBridgeCode(ctx, t, "tasks", "orphans", "--data-dir", empty)
	if code != 0 || !strings.Contains(out, "no orphaned upstream tasks") {
		t.Fatalf("an empty store: exit %d: %s\n%s", code, stderr, out)
	}
}
