package legacyface

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/runtime/upcred"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// withCredential calls with the freshest credential, moves on after a 401,
// and once every credential is refused makes no upstream call at all
// until a fresh one arrives (polling pauses).
func TestWithCredentialPausesWhenExhausted(t *testing.T) {
	b := &Bridge{creds: upcred.New(upcred.Config{Upstream: "u", Logger: slog.New(slog.DiscardHandler)})}
	ctx := context.Background()
	valid := map[string]bool{"Bearer B": true}
	var sent []string
	call := func(o modernup.CallOptions) error {
		sent = append(sent, o.Authorization)
		if !valid[o.Authorization] {
			return &oauthmeta.UpstreamAuthError{Status: http.StatusUnauthorized, Method: "tasks/get"}
		}
		return nil
	}
	b.creds.Observe(ctx, "alice", "Bearer A", time.Time{})
	if err := b.withCredential(ctx, "alice", modernup.CallOptions{Authorization: "Bearer A"}, call); !errors.As(err, new(credentialsExhausted)) {
		t.Fatalf("with A refused and nothing else: %v", err)
	}
	for range 5 {
		if err := b.withCredential(ctx, "alice", modernup.CallOptions{Authorization: "Bearer A"}, call); !errors.As(err, new(credentialsExhausted)) {
			t.Fatalf("exhausted: %v", err)
		}
	}
	if len(sent) != 1 {
		t.Fatalf("calls made: %q; want one (A), then none while exhausted", sent)
	}
	b.creds.Observe(ctx, "alice", "Bearer B", time.Time{})
	if err := b.withCredential(ctx, "alice", modernup.CallOptions{Authorization: "Bearer A"}, call); err != nil {
		t.Fatalf("with B: %v", err)
	}
	if sent[len(sent)-1] != "Bearer B" {
		t.Fatalf("calls made: %q", sent)
	}
	// No principal: the options as they are, whatever the keeper holds.
	sent = nil
	_ = b.withCredential(ctx, "", modernup.CallOptions{Authorization: "Bearer X"}, call)
	if len(sent) != 1 || sent[0] != "Bearer X" {
		t.Fatalf("anonymous call: %q", sent)
	}
}
