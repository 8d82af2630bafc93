package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// The bridge's own records (owned by sessionmap.BridgePrincipal) are not
// client sessions: the admin views leave them out, and with --internal show
// them without their payload, so the requestState HMAC key is never printed.
func TestSessionsHideInternalRecords(t *testing.T) {
	dir, _ := writeAdminStore(t)
	const secretKey = "c2VjcmV0LWhtYWMta2V5LW5ldmVyLXByaW50ZWQ"
	s, err := sessionmap.OpenBadger(dir, sessionmap.WithGCInterval(0),
		sessionmap.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"modern-face-request-state-key", "upstream-era-0011223344556677", "task-input-t1-1"} {
		if err := s.CreateSession(context.Background(), sessionmap.Session{ID: id, Principal: sessionmap.BridgePrincipal,
			Era: era.Modern, InitializeParams: json.RawMessage(`{"key":"` + secretKey + `"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	noSecret := func(what, out string) {
		t.Helper()
		if strings.Contains(out, secretKey) {
			t.Fatalf("%s prints an internal record's secret payload:\n%s", what, out)
		}
	}
	out, err := runBridge(t, "sessions", "list", "--data-dir", dir)
	if err != nil || strings.Contains(out, "modern-face-request-state-key") || strings.Contains(out, "upstream-era-") ||
		strings.Contains(out, "task-input-") || !strings.Contains(out, "sess-a") {
		t.Fatalf("sessions list = %v, want the client sessions only:\n%s", err, out)
	}
	out, err = runBridge(t, "sessions", "list", "--json", "--data-dir", dir)
	var got []sessionmap.Session
	if err != nil || json.Unmarshal([]byte(out), &got) != nil || len(got) != 3 {
		t.Fatalf("sessions list --json = %v, want the 3 client sessions:\n%s", err, out)
	}
	out, err = runBridge(t, "sessions", "show", "--data-dir", dir, "modern-face-request-state-key")
	noSecret("sessions show", out)
	if err == nil || !strings.Contains(err.Error(), "--internal") {
		t.Fatalf("sessions show of an internal record = %v, want a refusal naming --internal:\n%s", err, out)
	}

	out, err = runBridge(t, "sessions", "list", "--internal", "--json", "--data-dir", dir)
	noSecret("sessions list --internal --json", out)
	if err != nil || json.Unmarshal([]byte(out), &got) != nil || len(got) != 6 {
		t.Fatalf("sessions list --internal --json = %v, want 6 sessions:\n%s", err, out)
	}
	for _, args := range [][]string{{"--internal"}, {"--internal", "--json"}} {
		out, err = runBridge(t, append(append([]string{"sessions", "show"}, args...), "--data-dir", dir, "modern-face-request-state-key")...)
		noSecret("sessions show "+strings.Join(args, " "), out)
		if err != nil || !strings.Contains(out, "not shown") {
			t.Fatalf("sessions show %v = %v, want the record with its payload redacted:\n%s", args, err, out)
		}
	}
}
