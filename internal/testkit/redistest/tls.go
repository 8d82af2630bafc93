package redistest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TLSFiles are the PEM files of a test PKI: a CA, a server certificate it
// signed (for 127.0.0.1 and localhost), a client certificate it signed, and
// a second, unrelated CA that trusts neither.
type TLSFiles struct {
	CA, ServerCert, ServerKey, ClientCert, ClientKey string
	// OtherCA signed nothing the server or client hold.
	OtherCA string
}

// NewTLSFiles writes a fresh test PKI into t.TempDir(): ECDSA P-256 keys,
// certificates valid for an hour.
func NewTLSFiles(t testing.TB) TLSFiles {
	t.Helper()
	dir := t.TempDir()
	f := TLSFiles{
		CA: filepath.Join(dir, "ca.pem"), OtherCA: filepath.Join(dir, "other-ca.pem"),
		ServerCert: filepath.Join(dir, "server.pem"), ServerKey: filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client-key.pem"),
	}
	ca, caKey := newCert(t, "tasksbridge test CA", nil, nil, nil)
	writePEM(t, f.CA, "CERTIFICATE", ca.Raw)
	other, _ := newCert(t, "tasksbridge other test CA", nil, nil, nil)
	writePEM(t, f.OtherCA, "CERTIFICATE", other.Raw)
	srv, srvKey := newCert(t, "redis test server", ca, caKey, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth})
	writePEM(t, f.ServerCert, "CERTIFICATE", srv.Raw)
	writeKey(t, f.ServerKey, srvKey)
	cli, cliKey := newCert(t, "tasksbridge test client", ca, caKey, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth})
	writePEM(t, f.ClientCert, "CERTIFICATE", cli.Raw)
	writeKey(t, f.ClientKey, cliKey)
	return f
}

// newCert makes a CA (parent nil) or a leaf signed by parent, with SANs
// 127.0.0.1 and localhost on leaves.
func newCert(t testing.TB, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, eku []x509.ExtKeyUsage) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: eku,
	}
	signer, signerKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	} else {
		tmpl.DNSNames = []string{"localhost"}
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		signer, signerKey = parent, parentKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, key
}

func writeKey(t testing.TB, path string, key *ecdsa.PrivateKey) {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, path, "PRIVATE KEY", der)
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// ClientTLS is the client configuration of f: its CA and client certificate.
func (f TLSFiles) ClientTLS() (*tls.Config, error) {
	pemCA, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemCA) {
		return nil, fmt.Errorf("%s holds no certificate", f.CA)
	}
	cert, err := tls.LoadX509KeyPair(f.ClientCert, f.ClientKey)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}, nil
}

// StartTLS starts a redis-server of its own that listens only for TLS on a
// free loopback port, with f's server certificate, and that requires a
// client certificate signed by f.CA (--tls-auth-clients yes). Its URL is
// rediss://127.0.0.1:PORT/0. Extra arguments are appended (e.g.
// "--requirepass", "pw"). It returns once a TLS client with f's client
// certificate has been served a PING reply, and is stopped at t's cleanup.
func StartTLS(t testing.TB, f TLSFiles, extra ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal(InstallHint)
	}
	dir := t.TempDir()
	var s *Server
	// As in Launch: a free port can be taken before redis-server binds it.
	for range 3 {
		var port int
		if port, err = freePort(); err != nil {
			continue
		}
		args := append([]string{
			"--port", "0", "--tls-port", strconv.Itoa(port),
			"--tls-cert-file", f.ServerCert, "--tls-key-file", f.ServerKey,
			"--tls-ca-cert-file", f.CA, "--tls-auth-clients", "yes",
		}, extra...)
		// startOnFreePort's plain port is overridden by "--port 0" above:
		// the server has no plaintext listener at all.
		s, err = startOnFreePort(dir, bin, args)
		if err == nil {
			addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			s.Addr, s.URL = addr, "rediss://"+addr+"/0"
			break
		}
	}
	if err != nil {
		t.Fatalf("redistest: cannot start a TLS redis-server: %v", err)
	}
	t.Cleanup(s.Stop)
	if err := waitTLS(s.Addr, f); err != nil {
		t.Fatalf("redistest: the TLS redis-server at %s: %v", s.Addr, err)
	}
	return s
}

// waitTLS dials addr over TLS with f's client certificate until a PING is
// answered, within startTimeout. The server logged that it is ready before
// StartTLS got here; this proves the TLS listener is the one serving.
func waitTLS(addr string, f TLSFiles) error {
	tc, err := f.ClientTLS()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	d := tls.Dialer{Config: tc}
	for {
		err := pingTLS(ctx, &d, addr)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no TLS PING reply within %s: %w", startTimeout, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func pingTLS(ctx context.Context, d *tls.Dialer, addr string) error {
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	// A server that requires a password answers -NOAUTH: it is serving.
	if n == 0 || (buf[0] != '+' && buf[0] != '-') {
		return fmt.Errorf("unexpected reply %q", buf[:n])
	}
	return nil
}
