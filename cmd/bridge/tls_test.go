package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/syncbuf"
	"github.com/tasksbridge/tasksbridge/internal/testkit/tlstest"
	"github.com/tasksbridge/tasksbridge/internal/tlsconf"
	"github.com/tasksbridge/tasksbridge/interop/peers"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// startTLSServe runs `bridge serve` with args and its log (info) in logs;
// it returns the printed endpoint.
func startTLSServe(ctx context.Context, t *testing.T, logs *syncbuf.Buffer, args ...string) string {
	t.Helper()
	runCtx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	app := newApp()
	app.Writer, app.ErrWriter = pw, logs
	done := make(chan error, 1)
	go func() {
		err := app.RunContext(runCtx, append([]string{"bridge", "serve", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--log-level", "info"}, args...))
		pw.Close()
		done <- err
	}()
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "bridge: "); ok {
				urlc <- rest
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve returned %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})
	select {
	case u := <-urlc:
		return u
	case err := <-done:
		t.Fatalf("serve exited: %v\n%s", err, logs.String())
	case <-ctx.Done():
		t.Fatal("serve printed no endpoint")
	}
	return ""
}

// httpsClient trusts roots and presents cert (when given).
func httpsClient(roots *x509.CertPool, cert ...tls.Certificate) *http.Client {
	tc := &tls.Config{RootCAs: roots}
	if len(cert) > 0 {
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert[0], nil }
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true}}
}

// echoBoth runs a 2025-11-25 and a 2026-07-28 go-sdk client through url
// (a demo upstream behind it) and returns the first failure.
func echoBoth(ctx context.Context, t *testing.T, url string, hc *http.Client) error {
	t.Helper()
	cs, err := legacyClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return err
	}
	defer cs.Close()
	if err := echo(ctx, t, cs, "legacy over https"); err != nil {
		return err
	}
	ms, err := modernClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: demo.ProtocolVersion})
	if err != nil {
		return err
	}
	defer ms.Close()
	return echo(ctx, t, ms, "modern over https")
}

func echo(ctx context.Context, t *testing.T, cs *mcp.ClientSession, text string) error {
	t.Helper()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	if err != nil {
		return err
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text != text {
		t.Errorf("echo %q: %+v", text, r.Content)
	}
	return nil
}

// tsSteps are the TypeScript client's steps run over https (a task, a
// streamed and a plain call).
var tsSteps = []string{"init", "list", "task", "stream", "plain"}

// serial is the serial of the certificate a new connection to url gets,
// and whether hc reused a connection.
func serial(t *testing.T, hc *http.Client, url string) (string, bool) {
	t.Helper()
	var reused bool
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}))
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	return resp.TLS.PeerCertificates[0].SerialNumber.String(), reused
}

func waitLog(t *testing.T, logs *syncbuf.Buffer, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(logs.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("log lacks %q:\n%s", want, logs.String())
		}
		time.Sleep(10 * time.Millisecond) // polling the log under a deadline
	}
}

// `bridge serve --tls-cert --tls-key`: the printed endpoint is https; the
// go-sdk clients of both eras and the TypeScript SDK's legacy client work
// through it with the test CA; TLS 1.1 is refused; replaced certificate
// files are picked up for new connections while an open keep-alive
// connection keeps working, and a bad new pair keeps the old one.
func TestServeTLSListener(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ca := tlstest.NewCA(t, "bridge test CA")
	a := ca.Issue(t, "bridge", tlstest.Leaf{})
	var logs syncbuf.Buffer
	url := startTLSServe(ctx, t, &logs, "--upstream", startDemoUpstream(t), "--tls-cert", a.CertFile, "--tls-key", a.Key, "--tls-reload-interval", "20ms")
	if !strings.HasPrefix(url, "https://127.0.0.1:") {
		t.Fatalf("endpoint %q, want https", url)
	}
	base := strings.TrimSuffix(url, "/mcp")
	hc := httpsClient(ca.Pool())
	if err := echoBoth(ctx, t, url, hc); err != nil {
		t.Fatalf("go-sdk clients over https: %v", err)
	}
	peers.RunTSClient(t, url, peers.ClientOptions{Steps: tsSteps, Args: []string{"--default-poll-ms", "50"},
		Env: []string{"NODE_EXTRA_CA_CERTS=" + ca.File}}).Require(t)

	old := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}}}
	if _, err := old.Get(base + "/healthz"); err == nil {
		t.Error("a TLS 1.1 client was served")
	}

	// Rotation by the file watch.
	keep := httpsClient(ca.Pool())
	s1, _ := serial(t, keep, base+"/healthz")
	b := ca.Issue(t, "bridge-next", tlstest.Leaf{})
	tlstest.WriteFile(t, a.Key, b.KeyPEM)
	tlstest.WriteFile(t, a.CertFile, b.CertPEM)
	deadline := time.Now().Add(15 * time.Second)
	for {
		s, _ := serial(t, httpsClient(ca.Pool()), base+"/healthz")
		if s == b.Cert.SerialNumber.String() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("new connections still get %s after the files were replaced", s)
		}
		time.Sleep(10 * time.Millisecond) // polling the listener under a deadline
	}
	if s, reused := serial(t, keep, base+"/healthz"); !reused || s != s1 {
		t.Fatalf("open keep-alive connection: reused %v, certificate %s; want the same connection with %s", reused, s, s1)
	}
	// A bad pair: another certificate with the current key.
	// (The rotation above may have logged one refusal between its two
	// writes: wait for one more.)
	const refused = "the new certificate was refused; still serving the previous one"
	before := strings.Count(logs.String(), refused)
	c := ca.Issue(t, "bridge-bad", tlstest.Leaf{})
	tlstest.WriteFile(t, a.CertFile, c.CertPEM)
	deadline = time.Now().Add(15 * time.Second)
	for strings.Count(logs.String(), refused) == before {
		if time.Now().After(deadline) {
			t.Fatalf("no WARN for the bad pair:\n%s", logs.String())
		}
		time.Sleep(10 * time.Millisecond) // polling the log under a deadline
	}
	if s, _ := serial(t, httpsClient(ca.Pool()), base+"/healthz"); s != b.Cert.SerialNumber.String() {
		t.Fatalf("after a bad pair new connections get %s, want the kept %s", s, b.Cert.SerialNumber)
	}
	if err := echoBoth(ctx, t, url, httpsClient(ca.Pool())); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
}

// --tls-client-ca with --principal mtls: client certificates required, the
// go-sdk and TypeScript clients with one work, without one the handshake
// fails (logged, rate-limited); with --tls-client-auth request a client
// without a certificate connects and gets 401 from --principal mtls.
func TestServeMTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ca := tlstest.NewCA(t, "bridge test CA")
	srv := ca.Issue(t, "bridge", tlstest.Leaf{})
	alice := ca.Issue(t, "alice", tlstest.Leaf{Client: true, CN: "alice"})
	up := startDemoUpstream(t)

	var logs syncbuf.Buffer
	url := startTLSServe(ctx, t, &logs, "--upstream", up, "--tls-cert", srv.CertFile, "--tls-key", srv.Key,
		"--tls-client-ca", ca.File, "--principal", "mtls")
	if err := echoBoth(ctx, t, url, httpsClient(ca.Pool(), alice.TLS(t))); err != nil {
		t.Fatalf("go-sdk clients with a client certificate: %v", err)
	}
	peers.RunTSClient(t, url, peers.ClientOptions{Steps: tsSteps, Args: []string{"--default-poll-ms", "50"},
		Env: []string{"NODE_EXTRA_CA_CERTS=" + ca.File, "TASKSBRIDGE_TLS_CLIENT_CERT=" + alice.CertFile, "TASKSBRIDGE_TLS_CLIENT_KEY=" + alice.Key}}).Require(t)

	// The principal is the certificate's subject: bob does not get alice's
	// session.
	bob := ca.Issue(t, "bob", tlstest.Leaf{Client: true, CN: "bob"})
	resp, err := httpsClient(ca.Pool(), alice.TLS(t)).Post(url, "application/json", strings.NewReader(initialize))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("alice's initialize: %d, session %q", resp.StatusCode, sid)
	}
	for who, cert := range map[string]tls.Certificate{"alice": alice.TLS(t), "bob": bob.TLS(t)} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		resp, err := httpsClient(ca.Pool(), cert).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := map[string]int{"alice": http.StatusOK, "bob": http.StatusNotFound}[who]; resp.StatusCode != want {
			t.Errorf("%s's tools/list on alice's session: HTTP %d, want %d", who, resp.StatusCode, want)
		}
	}

	if err := echoBoth(ctx, t, url, httpsClient(ca.Pool())); err == nil {
		t.Fatal("a client without a certificate was served")
	}
	if rep := peers.RunTSClient(t, url, peers.ClientOptions{Steps: []string{"init"}, Timeout: 20 * time.Second,
		Env: []string{"NODE_EXTRA_CA_CERTS=" + ca.File}}); rep.OK {
		t.Fatal("the TypeScript client without a certificate was served")
	}
	waitLog(t, &logs, "the client sent no certificate")
	if n := strings.Count(logs.String(), "handshake with the listener failed"); n != 1 {
		t.Errorf("%d handshake failure lines, want one (rate-limited):\n%s", n, logs.String())
	}

	var logs2 syncbuf.Buffer
	url = startTLSServe(ctx, t, &logs2, "--upstream", up, "--tls-cert", srv.CertFile, "--tls-key", srv.Key,
		"--tls-client-ca", ca.File, "--tls-client-auth", "request", "--principal", "mtls")
	resp, err = httpsClient(ca.Pool()).Post(url, "application/json", strings.NewReader(initialize))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "client certificate") {
		t.Fatalf("request mode without a certificate: %d %s, want 401 from --principal mtls", resp.StatusCode, body)
	}
	if err := echoBoth(ctx, t, url, httpsClient(ca.Pool(), alice.TLS(t))); err != nil {
		t.Fatalf("request mode with a certificate: %v", err)
	}
}

// An https upstream with a private CA: without --upstream-ca the client's
// error says the bridge could not reach the upstream securely (no x509
// text), the log names the cause and the flag, /metrics counts code tls;
// with --upstream-ca it works; --upstream-tls-insecure-skip-verify works
// and warns at start.
func TestServeUpstreamTLS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ca := tlstest.NewCA(t, "upstream test CA")
	pair := ca.Issue(t, "upstream", tlstest.Leaf{})
	d := demo.New(demo.Options{PollInterval: 20 * time.Millisecond})
	t.Cleanup(d.Close)
	hs := httptest.NewUnstartedServer(d.Handler())
	hs.Config.ErrorLog = log.New(io.Discard, "", 0)
	hs.TLS = &tls.Config{Certificates: []tls.Certificate{pair.TLS(t)}}
	hs.StartTLS()
	t.Cleanup(hs.Close)
	up := hs.URL + "/mcp"

	var logs syncbuf.Buffer
	url := startTLSServe(ctx, t, &logs, "--upstream", up)
	if _, err := legacyClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}); err == nil {
		t.Fatal("connected through an untrusted upstream")
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(initialize))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"error"`) || !strings.Contains(string(body), "could not reach the upstream securely") || strings.Contains(string(body), "x509") {
		t.Fatalf("initialize through an untrusted upstream: %d %s; want a JSON-RPC error saying 'could not reach the upstream securely' without x509 details", resp.StatusCode, body)
	}
	waitLog(t, &logs, "the upstream's certificate is not trusted: signed by unknown authority; set --upstream-ca")
	if m := httpGetBody(t, strings.TrimSuffix(url, "/mcp")+"/metrics"); !strings.Contains(m, `code="tls"`) {
		t.Errorf("/metrics counts no tls failure")
	}

	url = startTLSServe(ctx, t, &syncbuf.Buffer{}, "--upstream", up, "--upstream-ca", ca.File)
	if err := echoBoth(ctx, t, url, nil); err != nil {
		t.Fatalf("with --upstream-ca: %v", err)
	}

	var logs3 syncbuf.Buffer
	url = startTLSServe(ctx, t, &logs3, "--upstream", up, "--upstream-tls-insecure-skip-verify")
	if !strings.Contains(logs3.String(), "level=WARN") || !strings.Contains(logs3.String(), "NOT verified") {
		t.Errorf("no WARN for --upstream-tls-insecure-skip-verify:\n%s", logs3.String())
	}
	if err := echoBoth(ctx, t, url, nil); err != nil {
		t.Fatalf("with --upstream-tls-insecure-skip-verify: %v", err)
	}
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`

func httpGetBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// Inconsistent TLS flags are refused at start with what to do.
func TestServeTLSFlagsRefused(t *testing.T) {
	ca := tlstest.NewCA(t, "test CA")
	p := ca.Issue(t, "bridge", tlstest.Leaf{})
	other := ca.Issue(t, "other", tlstest.Leaf{})
	up := []string{"serve", "--upstream", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir()}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", p.CertFile}, "--tls-cert and --tls-key go together"},
		{[]string{"--tls-client-ca", ca.File}, "--tls-client-ca needs --tls-cert"},
		{[]string{"--tls-cert", p.CertFile, "--tls-key", p.Key, "--tls-client-auth", "require"}, "--tls-client-auth needs --tls-client-ca"},
		{[]string{"--tls-cert", p.CertFile, "--tls-key", p.Key, "--tls-client-ca", ca.File, "--tls-client-auth", "optional"}, "want require or request"},
		{[]string{"--principal", "mtls"}, "--principal mtls needs --tls-cert, --tls-key and --tls-client-ca"},
		{[]string{"--tls-cert", p.CertFile, "--tls-key", other.Key}, "the key does not belong to the certificate"},
		{[]string{"--upstream-ca", ca.File}, "apply to an https:// --upstream only"},
	} {
		out, err := runBridge(t, append(append([]string{}, up...), tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve %v = %v (%s), want %q", tc.args, err, out, tc.want)
		}
	}
	if _, err := runBridge(t, "serve", "--upstream", "https://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--upstream-client-cert", p.CertFile); err == nil || !strings.Contains(err.Error(), "needs both its certificate and its key") {
		t.Errorf("--upstream-client-cert alone: %v", err)
	}
}

// ReloadTLS (what SIGHUP calls) serves replaced files to new connections
// at once, without the file watch; a bad pair is refused and reported.
func TestServeHTTPReloadTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "bridge test CA")
	a := ca.Issue(t, "bridge", tlstest.Leaf{})
	l, err := tlsconf.NewListener(tlsconf.ListenerConfig{CertFile: a.CertFile, KeyFile: a.Key, PollInterval: -1, Logger: newLogger(io.Discard, "error")})
	if err != nil {
		t.Fatal(err)
	}
	s, err := router.New(router.Config{Upstream: startDemoUpstream(t), Store: sessionmap.NewMemory(), Logger: newLogger(io.Discard, "error")})
	if err != nil {
		t.Fatal(err)
	}
	hs, err := serveHTTP(s, "127.0.0.1:0", "", listenOptions{ShutdownTimeout: 5 * time.Second, TLS: &listenerTLS{l: l, log: newLogger(io.Discard, "error")}})
	if err != nil {
		t.Fatal(err)
	}
	defer hs.stop()
	if !strings.HasPrefix(hs.url, "https://") {
		t.Fatalf("url %q", hs.url)
	}
	healthz := strings.TrimSuffix(hs.url, "/mcp") + "/healthz"
	b := ca.Issue(t, "bridge-next", tlstest.Leaf{})
	tlstest.WriteFile(t, a.CertFile, b.CertPEM)
	tlstest.WriteFile(t, a.Key, b.KeyPEM)
	if s, _ := serial(t, httpsClient(ca.Pool()), healthz); s != a.Cert.SerialNumber.String() {
		t.Fatalf("served %s before the reload", s)
	}
	if err := hs.ReloadTLS(); err != nil {
		t.Fatal(err)
	}
	if s, _ := serial(t, httpsClient(ca.Pool()), healthz); s != b.Cert.SerialNumber.String() {
		t.Fatalf("served %s after ReloadTLS, want %s", s, b.Cert.SerialNumber)
	}
	tlstest.WriteFile(t, a.CertFile, a.CertPEM) // a's certificate with b's key
	if err := hs.ReloadTLS(); err == nil {
		t.Fatal("a mismatched pair was accepted")
	}
	if s, _ := serial(t, httpsClient(ca.Pool()), healthz); s != b.Cert.SerialNumber.String() {
		t.Fatalf("served %s after a refused reload", s)
	}
	if err := (&httpServing{}).ReloadTLS(); err != nil {
		t.Fatalf("plain http ReloadTLS: %v", err)
	}
}
