package router_test

import (
	"net/http"
	"strings"
	"testing"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/router"
)

// Reconfigure (bridge serve's SIGHUP) changes the Origin policy (M-43) and
// the legacy session bound of a serving bridge; a refused value changes
// nothing.
func TestReconfigureLive(t *testing.T) {
	ctx := ctxT(t)
	up := startModern(t)
	br := startBridge(t, router.Config{Upstream: up, Legacy: func(c *legacyface.Config) { c.MaxSessions = 1 }})
	get := func() int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, br.url, nil)
		req.Header.Set("Origin", "https://app.example.com")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(); code != http.StatusForbidden {
		t.Fatalf("foreign Origin before: %d, want 403", code)
	}
	if r := newLegacyClient(t, br.url, "app").initialize(ctx); r.Err != nil {
		t.Fatalf("first session: %s", r)
	}
	if r := newLegacyClient(t, br.url, "app").initialize(ctx); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("second session under bound 1: %s", r)
	}
	if err := br.srv.Reconfigure(router.Live{AllowedOrigins: []string{"*"}}); err == nil || !strings.Contains(err.Error(), "--allowed-origin") {
		t.Fatalf("Reconfigure with \"*\": %v", err)
	}
	if code := get(); code != http.StatusForbidden {
		t.Fatalf("after a refused Reconfigure: %d, want 403", code)
	}
	if err := br.srv.Reconfigure(router.Live{AllowedOrigins: []string{"https://app.example.com"}, MaxSessions: 2}); err != nil {
		t.Fatal(err)
	}
	if code := get(); code == http.StatusForbidden {
		t.Fatalf("listed Origin after Reconfigure: %d", code)
	}
	if r := newLegacyClient(t, br.url, "app").initialize(ctx); r.Err != nil {
		t.Fatalf("second session under bound 2: %s", r)
	}
}
