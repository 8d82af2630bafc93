// Package tlstest makes throw-away PKIs for tests: a CA generated in the
// test (ECDSA P-256, an hour of validity) and leaves it signs, written as
// PEM files into the test's temporary directory. Nothing is committed.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a test certificate authority.
type CA struct {
	Cert *x509.Certificate
	key  *ecdsa.PrivateKey
	// File is the CA certificate as a PEM file.
	File string
	dir  string
}

// NewCA makes a CA named cn and writes its certificate to a file.
func NewCA(t testing.TB, cn string) *CA {
	t.Helper()
	key := newKey(t)
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: cn, Organization: []string{"tasksbridge tests"}},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	dir := t.TempDir()
	ca := &CA{Cert: c, key: key, dir: dir, File: filepath.Join(dir, "ca.pem")}
	WriteFile(t, ca.File, pemBytes("CERTIFICATE", der))
	return ca
}

// Pool is a pool holding only the CA.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

// Leaf options.
type Leaf struct {
	// CN is the subject's common name.
	CN string
	// DNS names; none and no IPs: "localhost" and 127.0.0.1.
	DNS []string
	IPs []net.IP
	// Client makes a client certificate (else a server one).
	Client bool
	// Expired makes a certificate that ended an hour ago.
	Expired bool
}

// Pair is a leaf's PEM bytes and where they were written.
type Pair struct {
	Cert          *x509.Certificate
	CertPEM       []byte
	KeyPEM        []byte
	CertFile, Key string
}

// TLS is the pair as a tls.Certificate.
func (p Pair) TLS(t testing.TB) tls.Certificate {
	c, err := tls.X509KeyPair(p.CertPEM, p.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Issue signs a leaf and writes name.pem and name-key.pem.
func (ca *CA) Issue(t testing.TB, name string, o Leaf) Pair {
	t.Helper()
	key := newKey(t)
	now := time.Now()
	nb, na := now.Add(-time.Minute), now.Add(time.Hour)
	if o.Expired {
		nb, na = now.Add(-2*time.Hour), now.Add(-time.Hour)
	}
	if o.CN == "" {
		o.CN = name
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: o.CN, Organization: []string{"tasksbridge tests"}},
		NotBefore: nb, NotAfter: na, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if o.Client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	} else {
		tmpl.DNSNames, tmpl.IPAddresses = o.DNS, o.IPs
		if len(o.DNS) == 0 && len(o.IPs) == 0 {
			tmpl.DNSNames, tmpl.IPAddresses = []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	p := Pair{Cert: c, CertPEM: pemBytes("CERTIFICATE", der), KeyPEM: pemBytes("PRIVATE KEY", kder),
		CertFile: filepath.Join(ca.dir, name+".pem"), Key: filepath.Join(ca.dir, name+"-key.pem")}
	WriteFile(t, p.CertFile, p.CertPEM)
	WriteFile(t, p.Key, p.KeyPEM)
	return p
}

// WriteFile replaces path's content the way rotation tools do: a new file
// renamed over the old one.
func WriteFile(t testing.TB, path string, b []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func pemBytes(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
