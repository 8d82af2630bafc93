package authstub

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
)

func TestMetadataURLAndRelay(t *testing.T) {
	u, _ := url.Parse("https://bridge.example:8443/mcp")
	if got := MetadataURL(u); got != "https://bridge.example:8443/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("MetadataURL = %q", got)
	}
	w := httptest.NewRecorder()
	id, _ := jsonrpc.MakeID(float64(7))
	WriteAuthError(w, &oauthmeta.UpstreamAuthError{Status: 403, Challenges: []string{
		`Bearer error="insufficient_scope", scope="x y", resource_metadata="https://up/.well-known/oauth-protected-resource"`,
	}}, "https://b/.well-known/oauth-protected-resource/mcp", id)
	ch := w.Header().Get("WWW-Authenticate")
	if w.Code != http.StatusForbidden || ch != `Bearer error="insufficient_scope", scope="x y", resource_metadata="https://b/.well-known/oauth-protected-resource/mcp"` {
		t.Errorf("%d %q", w.Code, ch)
	}
	if !strings.Contains(w.Body.String(), `"id":7`) || !strings.Contains(w.Body.String(), "authorization") {
		t.Errorf("body %s", w.Body)
	}
}
