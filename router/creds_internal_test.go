package router

import (
	"crypto/rand"
	"log/slog"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/syncbuf"
	"github.com/tasksbridge/tasksbridge/runtime/credseal"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// With a credential key the faces' shared keeper seals credentials into
// the store; without one, one INFO line says they stay in memory and what
// that costs.
func TestCredentialKeeperWiring(t *testing.T) {
	k := make([]byte, credseal.KeySize)
	_, _ = rand.Read(k)
	seal, err := credseal.New(k)
	if err != nil {
		t.Fatal(err)
	}
	for _, withKey := range []bool{true, false} {
		var logs syncbuf.Buffer
		cfg := Config{Upstream: "http://127.0.0.1:9/mcp", Store: sessionmap.NewMemory(), UpstreamEra: "modern",
			Logger: slog.New(slog.NewTextHandler(&logs, nil))}
		if withKey {
			cfg.CredentialKey = seal
		}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if s.creds.Shared() != withKey || s.creds.Upstream() != s.target {
			t.Errorf("key %v: keeper shared=%v upstream=%q", withKey, s.creds.Shared(), s.creds.Upstream())
		}
		n := strings.Count(logs.String(), "memory only")
		if withKey && n != 0 || !withKey && (n != 1 || !strings.Contains(logs.String(), "level=INFO")) {
			t.Errorf("key %v: log %q", withKey, logs.String())
		}
		_ = s.Close()
	}
}
