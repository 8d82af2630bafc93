package router_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tasksbridge/tasksbridge/router"
)

// An upstream whose era is not known yet refuses the anonymous probe with a
// challenge that names its metadata at a path no well-known URI derives
// (RFC 9728 §5.1). The router relays that refusal; the relay must learn the
// URL from it, or the bridge's metadata answers 404 and the client never
// reaches the authorization server.
func TestAutoEraRefusalTeachesTheRelayTheMetadataURL(t *testing.T) {
	ctx := ctxT(t)
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	mux.HandleFunc("/custom/metadata/location.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": hs.URL + "/mcp", "authorization_servers": []string{"https://as.example/tenant1"}})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="`+hs.URL+`/custom/metadata/location.json"`)
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
	})
	env := startBridge(t, router.Config{Upstream: hs.URL + "/mcp", UpstreamEra: "auto"})

	wantRelayed(t, "anonymous initialize", newLegacyClient(t, env.url, "anon").initialize(ctx), http.StatusUnauthorized, env.base)
	resp, err := http.Get(env.base + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("bridge metadata: HTTP %d %s, want the document the challenge named", resp.StatusCode, body)
	}
	var doc struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Resource != env.url || len(doc.AuthorizationServers) != 1 || doc.AuthorizationServers[0] != "https://as.example/tenant1" {
		t.Errorf("bridge metadata %s, want resource %s and the upstream's authorization server", body, env.url)
	}
}
