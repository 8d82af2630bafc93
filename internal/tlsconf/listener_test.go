package tlsconf_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/syncbuf"
	"github.com/tasksbridge/tasksbridge/internal/testkit/tlstest"
	"github.com/tasksbridge/tasksbridge/internal/tlsconf"
)

// serve runs an HTTPS server on l's config; the handler answers with the
// verified client certificate's subject ("-" for none).
func serve(t *testing.T, l *tlsconf.Listener, log *slog.Logger) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
				io.WriteString(w, r.TLS.VerifiedChains[0][0].Subject.CommonName)
				return
			}
			io.WriteString(w, "-")
		}),
		TLSConfig: l.TLSConfig(), ReadHeaderTimeout: 10 * time.Second,
	}
	if log != nil {
		srv.ErrorLog = (&tlsconf.HandshakeLog{Log: log}).Logger()
	}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	return "https://" + ln.Addr().String() + "/"
}

// client trusts roots and presents cert (if any) whatever CAs the server
// names as acceptable.
func client(roots *x509.CertPool, certs ...tls.Certificate) *http.Client {
	tc := &tls.Config{RootCAs: roots}
	if len(certs) > 0 {
		tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &certs[0], nil }
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true}}
}

// get returns the body, the serial of the certificate the connection
// presented and whether the connection was reused.
func get(t *testing.T, c *http.Client, url string) (string, string, bool) {
	t.Helper()
	var reused bool
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
	}))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.TLS.PeerCertificates[0].SerialNumber.String(), reused
}

func newListener(t *testing.T, cfg tlsconf.ListenerConfig) *tlsconf.Listener {
	t.Helper()
	l, err := tlsconf.NewListener(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// Reload (SIGHUP): a keep-alive connection opened before keeps working on
// the certificate it was given, a new connection gets the new one, and a
// pair whose key belongs to another certificate is refused with a WARN
// while the previous pair keeps being served.
func TestListenerReloadKeepsOpenConnections(t *testing.T) {
	ca := tlstest.NewCA(t, "test CA")
	a := ca.Issue(t, "server", tlstest.Leaf{})
	var buf syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	l := newListener(t, tlsconf.ListenerConfig{CertFile: a.CertFile, KeyFile: a.Key, PollInterval: -1, Logger: log})
	url := serve(t, l, nil)

	old := client(ca.Pool())
	_, s1, _ := get(t, old, url)
	if s1 != a.Cert.SerialNumber.String() {
		t.Fatalf("served %s, want the first certificate", s1)
	}

	b := ca.Issue(t, "next", tlstest.Leaf{})
	tlstest.WriteFile(t, a.CertFile, b.CertPEM)
	tlstest.WriteFile(t, a.Key, b.KeyPEM)
	if err := l.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, s, reused := get(t, old, url); !reused || s != s1 {
		t.Fatalf("open connection: reused %v, certificate %s; want the same connection on the first certificate", reused, s)
	}
	if _, s, reused := get(t, client(ca.Pool()), url); reused || s != b.Cert.SerialNumber.String() {
		t.Fatalf("new connection: reused %v, certificate %s; want the new certificate %s", reused, s, b.Cert.SerialNumber)
	}
	if !strings.Contains(buf.String(), "serving a new certificate") {
		t.Errorf("no INFO about the new certificate:\n%s", buf.String())
	}

	// A bad pair: the new certificate with the previous key.
	c := ca.Issue(t, "bad", tlstest.Leaf{})
	tlstest.WriteFile(t, a.CertFile, c.CertPEM)
	err := l.Reload()
	if err == nil || !strings.Contains(err.Error(), "the key does not belong to the certificate") {
		t.Fatalf("bad pair: %v", err)
	}
	if _, s, _ := get(t, client(ca.Pool()), url); s != b.Cert.SerialNumber.String() {
		t.Fatalf("after a refused pair a new connection got %s, want the kept %s", s, b.Cert.SerialNumber)
	}
	if !strings.Contains(buf.String(), "level=WARN") || !strings.Contains(buf.String(), "still serving the previous one") {
		t.Errorf("no WARN for the refused pair:\n%s", buf.String())
	}
	// Not PEM at all.
	tlstest.WriteFile(t, a.CertFile, []byte("not a certificate"))
	if err := l.Reload(); err == nil || !strings.Contains(err.Error(), "no PEM data") {
		t.Fatalf("garbage: %v", err)
	}
	if l.Leaf().SerialNumber.Cmp(b.Cert.SerialNumber) != 0 {
		t.Fatal("the served certificate changed after a refused reload")
	}
}

// The watch reloads on its own when the files are replaced.
func TestListenerWatchesFiles(t *testing.T) {
	ca := tlstest.NewCA(t, "test CA")
	a := ca.Issue(t, "server", tlstest.Leaf{})
	l := newListener(t, tlsconf.ListenerConfig{CertFile: a.CertFile, KeyFile: a.Key, PollInterval: 5 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	l.Watch()
	url := serve(t, l, nil)
	b := ca.Issue(t, "next", tlstest.Leaf{})
	tlstest.WriteFile(t, a.Key, b.KeyPEM)
	tlstest.WriteFile(t, a.CertFile, b.CertPEM)
	deadline := time.Now().Add(10 * time.Second)
	for l.Leaf().SerialNumber.Cmp(b.Cert.SerialNumber) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the replaced files were not picked up")
		}
		time.Sleep(5 * time.Millisecond) // polling the listener's state under a deadline
	}
	if _, s, _ := get(t, client(ca.Pool()), url); s != b.Cert.SerialNumber.String() {
		t.Fatalf("new connection got %s after the watch reloaded", s)
	}
}

// TLS 1.2 is the minimum: a TLS 1.1 client is refused.
func TestListenerRefusesTLS11(t *testing.T) {
	ca := tlstest.NewCA(t, "test CA")
	a := ca.Issue(t, "server", tlstest.Leaf{})
	var buf syncbuf.Buffer
	l := newListener(t, tlsconf.ListenerConfig{CertFile: a.CertFile, KeyFile: a.Key, PollInterval: -1})
	url := serve(t, l, slog.New(slog.NewTextHandler(&buf, nil)))
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: ca.Pool(), MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}}}
	if _, err := c.Get(url); err == nil {
		t.Fatal("a TLS 1.1 client was served")
	}
	c12 := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: ca.Pool(), MaxVersion: tls.VersionTLS12}}}
	if body, _, _ := get(t, c12, url); body != "-" {
		t.Fatalf("TLS 1.2 client: %q", body)
	}
	waitFor(t, &buf, "TLS versions older than 1.2")
}

// Client certificates: required (no or a foreign certificate: refused) or
// requested (none: served without a verified chain; a foreign one:
// refused). The verified chain reaches the handler (--principal mtls).
func TestListenerClientAuth(t *testing.T) {
	ca := tlstest.NewCA(t, "test CA")
	other := tlstest.NewCA(t, "other CA")
	srv := ca.Issue(t, "server", tlstest.Leaf{})
	alice := ca.Issue(t, "alice", tlstest.Leaf{Client: true, CN: "alice"})
	mallory := other.Issue(t, "mallory", tlstest.Leaf{Client: true, CN: "mallory"})
	for _, mode := range []string{"require", "request"} {
		t.Run(mode, func(t *testing.T) {
			var buf syncbuf.Buffer
			l := newListener(t, tlsconf.ListenerConfig{CertFile: srv.CertFile, KeyFile: srv.Key, ClientCAFile: ca.File, ClientAuth: mode, PollInterval: -1})
			url := serve(t, l, slog.New(slog.NewTextHandler(&buf, nil)))
			if body, _, _ := get(t, client(ca.Pool(), alice.TLS(t)), url); body != "alice" {
				t.Fatalf("alice: %q", body)
			}
			_, err := client(ca.Pool(), mallory.TLS(t)).Get(url)
			if err == nil {
				t.Fatal("a certificate of another CA was accepted")
			}
			resp, err := client(ca.Pool()).Get(url)
			if mode == "require" {
				if err == nil {
					resp.Body.Close()
					t.Fatal("no client certificate, yet served")
				}
				// The foreign certificate's failure came first: the
				// rate limit holds this one.
				waitFor(t, &buf, "not signed by --tls-client-ca")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if b, _ := io.ReadAll(resp.Body); string(b) != "-" {
				t.Fatalf("no certificate: %q", b)
			}
		})
	}
	if _, err := tlsconf.NewListener(tlsconf.ListenerConfig{CertFile: srv.CertFile, KeyFile: srv.Key, ClientAuth: "require"}); err == nil {
		t.Error("client auth without a CA accepted")
	}
	if _, err := tlsconf.NewListener(tlsconf.ListenerConfig{CertFile: srv.CertFile, KeyFile: srv.Key, ClientCAFile: ca.File, ClientAuth: "maybe"}); err == nil {
		t.Error("client auth mode maybe accepted")
	}
	if _, err := tlsconf.NewListener(tlsconf.ListenerConfig{CertFile: srv.CertFile, KeyFile: srv.Key, ClientCAFile: srv.Key}); err == nil {
		t.Error("a key as the client CA bundle accepted")
	}
}

// waitFor polls the log (the server logs after the client saw the failure).
func waitFor(t *testing.T, buf *syncbuf.Buffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(buf.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("log lacks %q:\n%s", want, buf.String())
		}
		time.Sleep(5 * time.Millisecond) // polling the log under a deadline
	}
}

// Failed handshakes are summed up: one WARN, then none until the interval
// passed, then one with the count.
func TestHandshakeLogIsRateLimited(t *testing.T) {
	var buf syncbuf.Buffer
	now := time.Unix(1000, 0)
	h := &tlsconf.HandshakeLog{Log: slog.New(slog.NewTextHandler(&buf, nil)), Every: time.Minute, Now: func() time.Time { return now }}
	lg := h.Logger()
	for range 50 {
		lg.Printf("http: TLS handshake error from 127.0.0.1:5555: tls: client didn't provide a certificate")
	}
	if n := strings.Count(buf.String(), "level=WARN"); n != 1 || !strings.Contains(buf.String(), "the client sent no certificate") {
		t.Fatalf("%d lines for 50 failures in a minute:\n%s", n, buf.String())
	}
	now = now.Add(61 * time.Second)
	lg.Printf("http: TLS handshake error from 127.0.0.1:5556: tls: first record does not look like a TLS handshake")
	if n := strings.Count(buf.String(), "level=WARN"); n != 2 || !strings.Contains(buf.String(), "failures=50") || !strings.Contains(buf.String(), "did not speak TLS") {
		t.Fatalf("after the interval:\n%s", buf.String())
	}
	lg.Printf("http: TLS handshake error from 10.0.0.9:4444: EOF")
	if n := strings.Count(buf.String(), "level=WARN"); n != 2 {
		t.Fatalf("a TCP check's EOF logged as a failure:\n%s", buf.String())
	}
	lg.Printf("http: Accept error: too many open files")
	if !strings.Contains(buf.String(), "Accept error") {
		t.Fatalf("other server errors are logged as they come:\n%s", buf.String())
	}
}
