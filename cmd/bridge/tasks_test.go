package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

const adminTestSecret = "Bearer s3cret-token-never-printed"

// writeAdminStore fills a store in a fresh data dir: two principals and a
// credential-less session, with tasks in several states.
func writeAdminStore(t *testing.T) (dir string, tasks []sessionmap.Task) {
	t.Helper()
	dir = t.TempDir()
	s, err := sessionmap.OpenBadger(dir, sessionmap.WithGCInterval(0),
		sessionmap.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	scopes := []sessionmap.Scope{
		{Principal: sessionmap.PrincipalFromAuthorization(adminTestSecret), Session: "sess-a"},
		{Principal: sessionmap.PrincipalFromMTLSSubject("CN=b"), Session: "sess-b"},
		{Session: "sess-anon"},
	}
	for i, sc := range scopes {
		if err := s.CreateSession(ctx, sessionmap.Session{ID: sc.Session, Principal: sc.Principal, Era: era.Legacy,
			ProtocolVersion: "2025-11-25", InitializeParams: json.RawMessage(`{"clientInfo":{"name":"cli-test","version":"1"}}`)}); err != nil {
			t.Fatal(err)
		}
		for j := range 2 {
			task := sessionmap.Task{ID: sessionmap.NewTaskID(), Scope: sc, Direction: sessionmap.LegacyToModern,
				Origin: sessionmap.OriginUpstreamTask, Method: "tools/call", ToolName: "tool"}
			if err := s.CreateTask(ctx, task); err != nil {
				t.Fatal(err)
			}
			if (i+j)%2 == 0 {
				if _, err := s.UpdateStatus(ctx, sc, task.ID, sessionmap.Snapshot{Status: sessionmap.StatusCompleted,
					Result: json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)}); err != nil {
					t.Fatal(err)
				}
			}
			tasks = append(tasks, task)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, tasks
}

// runBridge runs the CLI in-process and returns its output.
func runBridge(t *testing.T, args ...string) (string, error) {
	t.Helper()
	app := newApp()
	var out bytes.Buffer
	app.Writer, app.ErrWriter = &out, &out
	err := app.Run(append([]string{"bridge"}, args...))
	return out.String(), err
}

func taskIDs(t *testing.T, out string) []string {
	t.Helper()
	var got []sessionmap.Task
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not a JSON task list: %v\n%s", err, out)
	}
	ids := make([]string, len(got))
	for i, x := range got {
		ids[i] = x.ID
	}
	slices.Sort(ids)
	return ids
}

func TestTasksListJSON(t *testing.T) {
	dir, tasks := writeAdminStore(t)
	out, err := runBridge(t, "tasks", "list", "--json", "--data-dir", dir)
	if err != nil {
		t.Fatalf("tasks list: %v\n%s", err, out)
	}
	var want []string
	for _, x := range tasks {
		want = append(want, x.ID)
	}
	slices.Sort(want)
	if got := taskIDs(t, out); !slices.Equal(got, want) {
		t.Fatalf("tasks list --json = %v, want %v", got, want)
	}
	if strings.Contains(out, "s3cret") {
		t.Fatal("a raw credential reached the output")
	}

	out, err = runBridge(t, "tasks", "list", "--json", "--data-dir", dir, "--session", "sess-b", "--status", "completed")
	if err != nil {
		t.Fatal(err)
	}
	if got := taskIDs(t, out); !slices.Equal(got, []string{tasks[3].ID}) {
		t.Fatalf("filtered list = %v, want [%s]", got, tasks[3].ID)
	}
	// The environment variable names the data dir too.
	t.Setenv("TASKSBRIDGE_DATA_DIR", dir)
	out, err = runBridge(t, "tasks", "list", "--json", "--status", "working")
	if err != nil {
		t.Fatal(err)
	}
	if got := taskIDs(t, out); len(got) != 3 {
		t.Fatalf("working tasks via env = %v, want 3", got)
	}
	if _, err := runBridge(t, "tasks", "list", "--status", "submitted"); err == nil || !strings.Contains(err.Error(), "input_required") {
		t.Fatalf("bad --status = %v, want an error listing the statuses", err)
	}
}

func TestTasksAndSessionsTables(t *testing.T) {
	dir, tasks := writeAdminStore(t)
	out, err := runBridge(t, "tasks", "list", "--data-dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	principal := sessionmap.PrincipalFromAuthorization(adminTestSecret)
	for _, want := range []string{"STATUS", tasks[0].ID, tasks[5].ID, "completed", "working", principal[:12] + "…", "sess-anon"} {
		if !strings.Contains(out, want) {
			t.Errorf("tasks table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret") || strings.Contains(out, principal) {
		t.Fatalf("table shows a credential or a full principal hash:\n%s", out)
	}

	if _, err := runBridge(t, "tasks", "show", tasks[0].ID, "--data-dir", dir); err == nil || !strings.Contains(err.Error(), "put flags before") {
		t.Fatalf("flags after the ID = %v, want a hint", err)
	}
	out, err = runBridge(t, "tasks", "show", "--data-dir", dir, tasks[0].ID)
	if err != nil || !strings.Contains(out, `"text": "hi"`) || !strings.Contains(out, "tools/call tool") {
		t.Fatalf("tasks show = %v\n%s", err, out)
	}
	out, err = runBridge(t, "tasks", "show", "--json", "--data-dir", dir, tasks[1].ID)
	var one sessionmap.Task
	if err != nil || json.Unmarshal([]byte(out), &one) != nil || one.ID != tasks[1].ID {
		t.Fatalf("tasks show --json = %v\n%s", err, out)
	}
	if _, err := runBridge(t, "tasks", "show", "--data-dir", dir, "nope"); err == nil || !strings.Contains(err.Error(), "no live task") {
		t.Fatalf("show unknown = %v", err)
	}

	out, err = runBridge(t, "sessions", "list", "--data-dir", dir)
	if err != nil || !strings.Contains(out, "sess-a") || !strings.Contains(out, "sess-anon") || !strings.Contains(out, "2025-11-25") {
		t.Fatalf("sessions list = %v\n%s", err, out)
	}
	out, err = runBridge(t, "sessions", "list", "--json", "--data-dir", dir)
	var sessions []sessionmap.Session
	if err != nil || json.Unmarshal([]byte(out), &sessions) != nil || len(sessions) != 3 {
		t.Fatalf("sessions list --json = %v\n%s", err, out)
	}
	out, err = runBridge(t, "sessions", "show", "--data-dir", dir, "sess-a")
	if err != nil || !strings.Contains(out, "cli-test") || !strings.Contains(out, principal) {
		t.Fatalf("sessions show = %v\n%s", err, out)
	}
}

// The admin commands are read-only and say clearly when the bridge holds the store.
func TestAdminWhileBridgeRuns(t *testing.T) {
	dir, _ := writeAdminStore(t)
	running, err := sessionmap.OpenBadger(dir, sessionmap.WithGCInterval(0))
	if err != nil {
		t.Fatal(err)
	}
	defer running.Close()
	_, err = runBridge(t, "tasks", "list", "--data-dir", dir)
	if !errors.Is(err, sessionmap.ErrLocked) || !strings.Contains(err.Error(), "running bridge") {
		t.Fatalf("tasks list on a running bridge's dir = %v", err)
	}
	if _, err := runBridge(t, "sessions", "list", "--data-dir", t.TempDir()+"/none"); err == nil || !strings.Contains(err.Error(), "no store") {
		t.Fatalf("sessions list on a missing dir = %v", err)
	}
}
