package server_test

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/server"
	"github.com/tasksbridge/tasksbridge/internal/syncbuf"
	"github.com/tasksbridge/tasksbridge/internal/tlsconf"
	"github.com/tasksbridge/tasksbridge/internal/tlsconf/tlstest"
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
			br := startBridge(t, server.Config{Upstream: httpsUpstream(t, handler(), srv, nil),
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
			br := startBridge(t, server.Config{Upstream: httpsUpstream(t, handler(), srv, nil),
				UpstreamTLS: upstreamTLS(t, tlsconf.UpstreamConfig{CAFile: ca.File})})
			if r := clientFor(t, era, br.url); r.Err != nil {
				t.Fatal(r)
			}
		})
		t.Run(era+"/client certificate", func(t *testing.T) {
			up := httpsUpstream(t, handler(), srv, ca)
			var log syncbuf.Buffer
			br := startBridge(t, server.Config{Upstream: up, UpstreamTLS: upstreamTLS(t, tlsconf.UpstreamConfig{CAFile: ca.File}),
				Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if r := clientFor(t, era, br.url); r.Err == nil {
				t.Fatalf("served without the client certificate the upstream requires: %s", r)
			}
			if !strings.Contains(log.String(), "set --upstream-client-cert and --upstream-client-key") {
				t.Errorf("log does not name the missing client certificate:\n%s", log.String())
			}
			br = startBridge(t, server.Config{Upstream: up, UpstreamTLS: upstreamTLS(t, tlsconf.UpstreamConfig{CAFile: ca.File,
				CertFile: bridgeCert.CertFile, KeyFile: bridgeCert.Key})})
			if r := clientFor(t, era, br.url); r.Err != nil {
				t.Fatal(r)
			}
		})
		t.Run(era+"/server name", func(t *testing.T) {
			up := httpsUpstream(t, handler(), named, nil)
			var log syncbuf.Buffer
			br := startBridge(t, server.Config{Upstream: up, UpstreamTLS: upstreamTLS(t, tlsconf.UpstreamConfig{CAFile: ca.File}),
				Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if r := clientFor(t, era, br.url); r.Err == nil {
				t.Fatalf("served by an upstream whose certificate names another host: %s", r)
			}
			if !strings.Contains(log.String(), "set --upstream-tls-server-name") {
				t.Errorf("log does not name the server name:\n%s", log.String())
			}
			br = startBridge(t, server.Config{Upstream: up, UpstreamTLS: upstreamTLS(t, tlsconf.UpstreamConfig{CAFile: ca.File, ServerName: "mcp.internal.test"})})
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
