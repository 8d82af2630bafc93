package legacyup_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
)

// A legacy upstream's 401 to initialize (which go-sdk reports as a bare
// status text) and to a later call come back typed, with the challenges.
func TestLegacyUpstreamRefusalIsTyped(t *testing.T) {
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	t.Cleanup(fx.DropSessions)
	inner := fx.Handler()
	var open atomic.Bool
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if open.Load() {
			inner.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="https://up/.well-known/oauth-protected-resource"`)
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	t.Cleanup(hs.Close)
	p, err := legacyup.NewPool(legacyup.Config{Endpoint: hs.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	ctx := ctxT(t)

	_, err = p.Session(ctx, "k", "")
	ae, ok := oauthmeta.AsUpstreamAuthError(err)
	if !ok || ae.Status != 401 || ae.Method != "initialize" || len(ae.Challenges) != 1 || !errors.Is(err, legacyup.ErrUnauthorized) || legacyup.Retryable(err) {
		t.Fatalf("initialize refused: %v (%+v)", err, ae)
	}

	open.Store(true)
	s, err := p.Session(ctx, "k", "")
	if err != nil {
		t.Fatal(err)
	}
	open.Store(false)
	_, err = s.Call(ctx, "tools/list", []byte(`{}`), legacyup.CallOptions{})
	if ae, ok := oauthmeta.AsUpstreamAuthError(err); !ok || ae.Method != "tools/list" || !legacyup.Unauthorized(err) {
		t.Fatalf("tools/list refused: %v (%+v)", err, ae)
	}
	if !s.Alive() {
		t.Error("a refused call ended the session; fresh credentials must be able to use it again")
	}
}
