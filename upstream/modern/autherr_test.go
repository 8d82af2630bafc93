package modernup

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/modern"
)

// A modern upstream's 401/403 comes back typed, with its challenges and the
// refused method, whatever body it carries; the era probe stays unknown on
// it (neither legacy nor modern) and answers once it is sent with a token.
func TestUpstreamRefusalIsTyped(t *testing.T) {
	srv := demo.New(demo.Options{})
	t.Cleanup(srv.Close)
	inner := srv.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Authorization") {
		case "Bearer good":
			inner.ServeHTTP(w, r)
		case "Bearer narrow":
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="a b"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"forbidden"}}`))
		default:
			w.Header().Add("WWW-Authenticate", `Bearer resource_metadata="https://up/.well-known/oauth-protected-resource/mcp"`)
			w.Header().Add("WWW-Authenticate", `DPoP algs="ES256"`)
			http.Error(w, "no", http.StatusUnauthorized)
		}
	}))
	t.Cleanup(hs.Close)
	c := NewHTTP(hs.URL+"/mcp", nil)
	ctx := ctxT(t)

	got, err := c.ProbeEra(ctx)
	if got != era.Unknown || !errors.Is(err, ErrUnauthorized) || Retryable(err) {
		t.Fatalf("anonymous probe: %v, %v; want unknown and ErrUnauthorized, not retryable", got, err)
	}
	ae, ok := oauthmeta.AsUpstreamAuthError(err)
	if !ok || ae.Status != 401 || len(ae.Challenges) != 2 || ae.Method != modern.MethodDiscover {
		t.Fatalf("refusal %+v (found %v)", ae, ok)
	}
	if !strings.Contains(err.Error(), "authorization") || !strings.Contains(err.Error(), "HTTP 401") {
		t.Errorf("message %q does not name the authorization", err)
	}

	_, err = c.Call(ctx, modern.MethodToolsList, nil, CallOptions{Authorization: "Bearer narrow"})
	if ae, ok := oauthmeta.AsUpstreamAuthError(err); !ok || ae.Status != 403 || !strings.Contains(ae.Challenges[0], "insufficient_scope") {
		t.Fatalf("403 with a JSON-RPC body: %v (%+v)", err, ae)
	}

	if got, err := c.ProbeEraAs(ctx, "Bearer good"); got != era.Modern || err != nil {
		t.Errorf("authorized probe: %v, %v; want modern", got, err)
	}
}
