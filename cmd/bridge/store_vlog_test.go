package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// A damaged value log (where values of 1 MiB or more live): `store verify`
// exits 1 naming it, and serve refuses in plain words naming it too. Before,
// verify exited 0 and serve cut the log and failed reads with a raw engine
// message.
func TestDamagedValueLogRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := sessionmap.OpenBadger(dir, sessionmap.WithGCInterval(0),
		sessionmap.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sc := sessionmap.Scope{Session: "s"}
	task := sessionmap.Task{ID: sessionmap.NewTaskID(), Scope: sc, Direction: sessionmap.LegacyToModern,
		Origin: sessionmap.OriginUpstreamTask, UpstreamTaskID: "up"}
	if err := s.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	big := json.RawMessage(`{"x":"` + strings.Repeat("a", 2<<20) + `"}`)
	if _, err := s.OweAnswers(ctx, sc, task.ID, map[string]json.RawMessage{"k": big}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	out, _, code := runBridgeCode(ctx, t, "store", "verify", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "1 value logs checked, no damage found") {
		t.Fatalf("store verify (clean) = exit %d\n%s", code, out)
	}
	vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	if len(vlogs) != 1 {
		t.Fatalf("value logs: %v", vlogs)
	}
	f, err := os.OpenFile(vlogs[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	if _, err := f.WriteAt([]byte{0xde, 0xad, 0xbe, 0xef}, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	name := filepath.Base(vlogs[0])

	out, _, code = runBridgeCode(ctx, t, "store", "verify", "--data-dir", dir)
	if code != 1 || !strings.Contains(out, name+" is damaged") {
		t.Fatalf("store verify (damaged value log) = exit %d, want 1 naming %s\n%s", code, name, out)
	}
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, errOut, code := runBridgeCode(sctx, t, "serve", "--upstream", "http://127.0.0.1:1/mcp", "--upstream-era", "legacy",
		"--listen", "127.0.0.1:0", "--data-dir", dir, "--log-level", "error")
	if sctx.Err() != nil || code == 0 || !strings.Contains(errOut, name) || !strings.Contains(errOut, "damaged") ||
		!strings.Contains(errOut, "MIGRATION.md") || strings.Contains(errOut, "Key:") {
		t.Fatalf("serve on a damaged value log = exit %d (context %v)\n%s", code, sctx.Err(), errOut)
	}
}
