package router_test

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/testkit/syncbuf"
	"github.com/tasksbridge/tasksbridge/internal/testkit/tlstest"
	"github.com/tasksbridge/tasksbridge/internal/tlsconf"
	"github.com/tasksbridge/tasksbridge/router"
)

// httpsUpstream serves h over TLS with pair, requiring a client certificate
// of clientCA when set.
func httpsUpstream(t *testing.T, h http.Handler, pair tlstest.Pair, clientCA *tlstest.CA) string {
	t.Helper()
	s := httptest.NewUnstartedServer(h)
	s.Config.ErrorLog = (&tlsconf.HandshakeLog{Log: quietLogger()}).Logger()
	s.TLS = &tls.Config{Certificates: []tls.Certificate{pair.TLS(t)}}
	if clientCA != nil {
		s.TLS.ClientCAs, s.TLS.ClientAuth = clientCA.Pool(), tls.RequireAndVerifyClientCert
	}
	s.StartTLS()
	t.Cleanup(func() {
		s.CloseClientConnections()
		s.Close()
	})
	return s.URL + "/mcp"
}

func upstreamTLS(t *testing.T, c tlsconf.UpstreamConfig) *tls.Config {
	t.Helper()
	tc, err := c.Client()
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// An https upstream signed by a private CA: without --upstream-ca every
// request fails, the log names the cause in plain words with the flag that
// fixes it, the metric counts code tls, and the client's error says the
// bridge could not reach the upstream securely without the x509 details.
// With the CA it works, also through a client certificate the upstream
// requires and a server name that is not the dialled host.
func TestHTTPSUpstreamPrivateCA(t *testing.T) {
	ca := tlstest.NewCA(t, "private upstream CA")
	srv := ca.Issue(t, "upstream", tlstest.Leaf{})
	named := ca.Issue(t, "named", tlstest.Leaf{DNS: []string{"mcp.internal.test"}})
	bridgeCert := ca.Issue(t, "bridge", tlstest.Leaf{Client: true})

	for _, era := range []string{"modern upstream", "legacy upstream"} {
		handler := func() http.Handler {
			if era == "modern upstream" {
				return modernHandler(t)
			}
			return legacyHandler(t)
		}
		t.Run(era+"/untrusted", func(t *testing.T) {
			var log syncbuf.Buffer
			br := startBridge(t, router.Config{Upstream: httpsUpstream(t, handler(), srv, nil),
				Logger: slog.New(slog.NewTextHandler(&log, nil))})
			r := clientFor(t, era, br.url)
			if r.Err == nil {
				t.Fatalf("served through an untrusted upstream: %s", r)
			}
			msg := r.Err.Message
			if !strings.Contains(msg, "could not reach the upstream securely") {
				t.Errorf("client error %q does not say the upstream could not be reached securely", msg)
			}
			for _, leak := range []string{"x509", "certificate signed", "tls:"} {
				if strings.Contains(msg, leak) {
					t.Errorf("client error %q leaks %q", msg, leak)
				}
			}
			want := "the upstream's certificate is not trusted: signed by unknown authority; set --upstream-ca"
			if !strings.Contains(log.String(), "level=WARN msg=\""+want) {
				t.Errorf("log lacks a WARN %q:\n%s", want, log.String())
			}
			if m := scrape(t, br.base+"/metrics"); !strings.Contains(m, `code="tls"`) {
				t.Errorf("no upstream request counted with code tls:\n%s", grepLines(m, "tasksbridge_upstream_requests_total"))
			}
		})
		t.Run(era+"/trusted", func(t *testing.T) {
			br := startBridge(t, router.Config{Upstream: httpsUpstream(t, handler(), srv, nil),
				UpstreamTLS: upstreamTLS(t, tlsconf.UpstreamConfig{CAFile: ca.File})})
			if r := clientFor(t, era, br.url); r.Err != nil {
				t.Fatal(r)
			}
		})
		t.Run(era+"/client certificate", func(t *testing.T) {
			up := httpsUpstream(t, handler(), srv, ca)
			var log syncbuf.Buffer
			br := startBridge(t, router.Config{Upstream: up, UpstreamTLS: upstreamTLS(t, tlsconf.UpstreamConfig{CAFile: ca.File}),
				Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if r := clientFor(t, era, br.url); r.Err == nil {
				t.Fatalf("served without the client certificate the upstream requires: %s", r)
			}
			if !strings.Contains(log.String(), "set --upstream-client-cert and --upstream-client-key") {
				t.Errorf("log does not name the missing client certificate:\n%s", log.String())
			}
			br = startBridge(t, router.Config{Upstream: up, UpstreamTLS: upstreamTLS(t, tlsconf.UpstreamConfig{CAFile: ca.File,
				CertFile: bridgeCert.CertFile, KeyFile: bridgeCert.Key})})
			if r := clientFor(t, era, br.url); r.Err != nil {
				t.Fatal(r)
			}
		})
		t.Run(era+"/server name", func(t *testing.T) {
			up := httpsUpstream(t, handler(), named, nil)
			var log syncbuf.Buffer
			br := startBridge(t, router.Config{Upstream: up, UpstreamTLS: upstreamTLS(t, tlsconf.UpstreamConfig{CAFile: ca.File}),
				Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if r := clientFor(t, era, br.url); r.Err == nil {
				t.Fatalf("served by an upstream whose certificate names another host: %s", r)
			}
			if !strings.Contains(log.String(), "set --upstream-tls-server-name") {
				t.Errorf("log does not name the server name:\n%s", log.String())
			}
			br = startBridge(t, router.Config{Upstream: up, UpstreamTLS: upstreamTLS(t, tlsconf.UpstreamConfig{CAFile: ca.File, ServerName: "mcp.internal.test"})})
			if r := clientFor(t, era, br.url); r.Err != nil {
				t.Fatal(r)
			}
		})
	}
}

// clientFor runs a translated exchange: a legacy client in front of a
// modern upstream, a modern one in front of a legacy upstream; it returns
// the first failure or the tools/call answer.
func clientFor(t *testing.T, era, url string) reply {
	t.Helper()
	c := ctxT(t)
	if era == "modern upstream" {
		lc := newLegacyClient(t, url, "legacy-app")
		if r := lc.initialize(c); r.Err != nil || r.Status != http.StatusOK {
			return r
		}
		return lc.call(c, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}})
	}
	mc := newModernClient(t, url, "modern-app")
	return mc.call(c, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}})
}

// The OAuth relay fetches the upstream's protected resource metadata over
// the same TLS settings: with a private CA and a client certificate the
// upstream requires, the bridge's well-known URI serves the document;
// without them the fetch fails without the x509 details reaching the
// client.
func TestHTTPSUpstreamOAuthMetadataRelay(t *testing.T) {
	ca := tlstest.NewCA(t, "private upstream CA")
	srv := ca.Issue(t, "upstream", tlstest.Leaf{})
	bridgeCert := ca.Issue(t, "bridge", tlstest.Leaf{Client: true})
	mux := http.NewServeMux()
	var upURL string
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": upURL, "authorization_servers": []string{"https://as.example/"}})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
	})
	upURL = httpsUpstream(t, mux, srv, ca)

	prm := func(env *bridgeEnv) (int, string) {
		resp, err := http.Get(env.base + "/.well-known/oauth-protected-resource/mcp")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	env := startBridge(t, router.Config{Upstream: upURL, UpstreamEra: "legacy", UpstreamTLS: upstreamTLS(t, tlsconf.UpstreamConfig{CAFile: ca.File,
		CertFile: bridgeCert.CertFile, KeyFile: bridgeCert.Key})})
	if st, body := prm(env); st != http.StatusOK || !strings.Contains(body, `"resource":"`+env.url+`"`) {
		t.Fatalf("metadata through the relay: %d %s", st, body)
	}
	env = startBridge(t, router.Config{Upstream: upURL, UpstreamEra: "legacy"})
	st, body := prm(env)
	if st == http.StatusOK || strings.Contains(body, "x509") || strings.Contains(body, "certificate") {
		t.Fatalf("metadata from an untrusted upstream: %d %s", st, body)
	}
}

// Pass-through traffic (same era, the era pinned so no probe runs first)
// fails the same way: a JSON-RPC error without the x509 details, code tls.
func TestHTTPSUpstreamPassthroughFailure(t *testing.T) {
	ca := tlstest.NewCA(t, "private upstream CA")
	srv := ca.Issue(t, "upstream", tlstest.Leaf{})
	for _, era := range []string{"modern", "legacy"} {
		t.Run(era, func(t *testing.T) {
			h, c := modernHandler(t), newModernClient(t, "", "modern-app")
			if era == "legacy" {
				h, c = legacyHandler(t), newLegacyClient(t, "", "legacy-app")
			}
			var log syncbuf.Buffer
			br := startBridge(t, router.Config{Upstream: httpsUpstream(t, h, srv, nil), UpstreamEra: era,
				Logger: slog.New(slog.NewTextHandler(&log, nil))})
			c.url = br.url
			var r reply
			if era == "legacy" {
				r = c.initialize(ctxT(t))
			} else {
				r = c.call(ctxT(t), "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}})
			}
			if r.Err == nil || strings.Contains(r.Err.Message, "x509") || strings.Contains(r.Err.Message, "certificate") ||
				!strings.Contains(r.Err.Message, "could not reach the upstream securely") {
				t.Fatalf("pass-through to an untrusted upstream: %s", r)
			}
			if !strings.Contains(log.String(), "set --upstream-ca") {
				t.Errorf("log lacks the cause:\n%s", log.String())
			}
			if m := scrape(t, br.base+"/metrics"); !strings.Contains(m, `code="tls"`) {
				t.Errorf("no code tls:\n%s", grepLines(m, "tasksbridge_upstream_requests_total"))
			}
		})
	}
}
