package legacyface_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
)

// SetLimits (bridge serve's SIGHUP) changes the session bound of a serving
// face: the next initialize sees it; sessions already held stay served.
func TestSetLimitsChangesSessionBoundLive(t *testing.T) {
	ctx := ctxT(t, 30*time.Second)
	up := startUpstream(t, demo.Options{})
	br := startBridge(t, up, legacyface.Config{MaxSessions: 1})
	first := newRawClient(t, br.url)
	first.initialize(ctx, nil)
	c := newRawClient(t, br.url)
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if r, err := c.post(ctx, body, 7); err != nil || r.Status != http.StatusServiceUnavailable {
		t.Fatalf("second session under bound 1: %v %+v", err, r)
	}
	br.b.SetLimits(legacyface.Limits{MaxSessions: 2})
	// The share derived from the bound follows it (one anonymous client,
	// one address, holds all of these sessions).
	if got := br.b.CurrentLimits(); got.MaxSessions != 2 || got.MaxSessionsPerPrincipal != 2 || got.MaxTasksPerPrincipal != legacyface.DefaultMaxTasksPerPrincipal {
		t.Fatalf("CurrentLimits: %+v", got)
	}
	if r, err := c.post(ctx, body, 7); err != nil || r.Status != http.StatusOK {
		t.Fatalf("second session under bound 2: %v %+v", err, r)
	}
	r, err := c.post(ctx, body, 7)
	if err != nil || r.Status != http.StatusServiceUnavailable || r.Err == nil || !strings.Contains(r.Err.Message, "maximum of 2 sessions") {
		t.Fatalf("third session under bound 2: %v %+v", err, r)
	}
	br.b.SetLimits(legacyface.Limits{MaxSessions: -1})
	if r, err := c.post(ctx, body, 7); err != nil || r.Status != http.StatusOK {
		t.Fatalf("third session without bound: %v %+v", err, r)
	}
	br.b.SetLimits(legacyface.Limits{MaxSessions: 1})
	if r := first.call(ctx, "tasks/list", nil); r.Err != nil {
		t.Errorf("a session held before the bound was lowered: %s", r.Envelope)
	}
}
