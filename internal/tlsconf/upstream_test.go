package tlsconf_test

import (
	"crypto/tls"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/syncbuf"
	"github.com/tasksbridge/tasksbridge/internal/testkit/tlstest"
	"github.com/tasksbridge/tasksbridge/internal/tlsconf"
)

// upstream is an https server with pair (and client CA ca when set).
func upstream(t *testing.T, pair tlstest.Pair, clientCA *tlstest.CA) string {
	t.Helper()
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.TLS = &tls.Config{Certificates: []tls.Certificate{pair.TLS(t)}}
	if clientCA != nil {
		s.TLS.ClientCAs, s.TLS.ClientAuth = clientCA.Pool(), tls.RequireAndVerifyClientCert
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	return s.URL
}

func fetch(t *testing.T, cfg tlsconf.UpstreamConfig, url string) error {
	t.Helper()
	tc, err := cfg.Client()
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tc}}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	return err
}

// Each way an https upstream fails is named in plain words with the flag
// that fixes it, and the flags fix it.
func TestUpstreamFailuresNamed(t *testing.T) {
	ca := tlstest.NewCA(t, "private CA")
	good := ca.Issue(t, "upstream", tlstest.Leaf{})
	named := ca.Issue(t, "named", tlstest.Leaf{DNS: []string{"mcp.internal.test"}})
	expired := ca.Issue(t, "expired", tlstest.Leaf{Expired: true})
	bridge := ca.Issue(t, "bridge", tlstest.Leaf{Client: true})

	goodURL := upstream(t, good, nil)
	namedURL := upstream(t, named, nil)
	mtlsURL := upstream(t, good, ca)
	plain := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(plain.Close)

	cases := []struct {
		name string
		cfg  tlsconf.UpstreamConfig
		url  string
		want string // "" works
	}{
		{"untrusted", tlsconf.UpstreamConfig{}, goodURL, "the upstream's certificate is not trusted: signed by unknown authority; set --upstream-ca"},
		{"trusted", tlsconf.UpstreamConfig{CAFile: ca.File}, goodURL, ""},
		{"wrong name", tlsconf.UpstreamConfig{CAFile: ca.File}, namedURL, "not valid for the name the bridge checks (cannot validate certificate for 127.0.0.1 because it doesn't contain any IP SANs); set --upstream-tls-server-name"},
		{"server name", tlsconf.UpstreamConfig{CAFile: ca.File, ServerName: "mcp.internal.test"}, namedURL, ""},
		{"expired", tlsconf.UpstreamConfig{CAFile: ca.File}, upstream(t, expired, nil), "has expired or is not valid yet"},
		{"no client certificate", tlsconf.UpstreamConfig{CAFile: ca.File}, mtlsURL, "it wants a client certificate it trusts; set --upstream-client-cert and --upstream-client-key"},
		{"client certificate", tlsconf.UpstreamConfig{CAFile: ca.File, CertFile: bridge.CertFile, KeyFile: bridge.Key}, mtlsURL, ""},
		{"not TLS", tlsconf.UpstreamConfig{}, strings.Replace(plain.URL, "http:", "https:", 1), "did not answer in TLS"},
		{"insecure", tlsconf.UpstreamConfig{InsecureSkipVerify: true}, goodURL, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := fetch(t, tc.cfg, tc.url)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			got, ok := tlsconf.DescribeUpstream(err)
			if !ok || !strings.Contains(got, tc.want) {
				t.Fatalf("DescribeUpstream(%v) = %q, %v; want %q", err, got, ok, tc.want)
			}
		})
	}
	if _, ok := tlsconf.DescribeUpstream(&net.OpError{Op: "dial", Err: io.EOF}); ok {
		t.Error("a refused dial described as a TLS failure")
	}
}

func TestUpstreamConfigErrors(t *testing.T) {
	ca := tlstest.NewCA(t, "private CA")
	p := ca.Issue(t, "bridge", tlstest.Leaf{Client: true})
	for name, cfg := range map[string]tlsconf.UpstreamConfig{
		"cert without key": {CertFile: p.CertFile},
		"key as CA":        {CAFile: p.Key},
		"missing CA":       {CAFile: p.CertFile + ".missing"},
		"swapped pair":     {CertFile: p.Key, KeyFile: p.CertFile},
	} {
		if _, err := cfg.Client(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	tc, err := tlsconf.UpstreamConfig{CAFile: ca.File}.Client()
	if err != nil || tc.MinVersion != tls.VersionTLS12 || tc.RootCAs == nil {
		t.Fatalf("%v %+v", err, tc)
	}
}

// The bridge's client certificate towards the upstream is read again when
// its files change: a new connection presents the new one; a bad new pair
// keeps the previous one.
func TestUpstreamClientCertificateReloaded(t *testing.T) {
	ca := tlstest.NewCA(t, "private CA")
	srv := ca.Issue(t, "upstream", tlstest.Leaf{})
	a := ca.Issue(t, "bridge", tlstest.Leaf{Client: true, CN: "bridge-a"})
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.TLS = &tls.Config{Certificates: []tls.Certificate{srv.TLS(t)}, ClientCAs: ca.Pool(), ClientAuth: tls.RequireAndVerifyClientCert}
	s.StartTLS()
	t.Cleanup(s.Close)
	var logs syncbuf.Buffer
	tc, err := tlsconf.UpstreamConfig{CAFile: ca.File, CertFile: a.CertFile, KeyFile: a.Key, Logger: slog.New(slog.NewTextHandler(&logs, nil))}.Client()
	if err != nil {
		t.Fatal(err)
	}
	cn := func() string {
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tc, DisableKeepAlives: true}}
		resp, err := c.Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := cn(); got != "bridge-a" {
		t.Fatalf("presented %q", got)
	}
	b := ca.Issue(t, "bridge-b", tlstest.Leaf{Client: true, CN: "bridge-b"})
	tlstest.WriteFile(t, a.Key, b.KeyPEM)
	tlstest.WriteFile(t, a.CertFile, b.CertPEM)
	if got := cn(); got != "bridge-b" {
		t.Fatalf("after rotation presented %q, want bridge-b", got)
	}
	c := ca.Issue(t, "bridge-c", tlstest.Leaf{Client: true, CN: "bridge-c"})
	tlstest.WriteFile(t, a.CertFile, c.CertPEM) // with b's key: refused
	if got := cn(); got != "bridge-b" {
		t.Fatalf("after a bad pair presented %q, want the kept bridge-b", got)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "the key does not belong to the certificate") {
		t.Errorf("no WARN for the bad pair:\n%s", logs.String())
	}
}
