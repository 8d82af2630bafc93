package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// UpstreamConfig is how the bridge dials an https upstream.
type UpstreamConfig struct {
	// CAFile is a PEM bundle trusted in addition to the system's roots
	// (a private CA; the public ones keep working).
	CAFile string
	// CertFile and KeyFile are the client certificate presented to an
	// upstream that asks for one (mutual TLS).
	CertFile, KeyFile string
	// ServerName is the name the upstream's certificate must carry (and the
	// SNI sent), when it is not the host of the upstream URL.
	ServerName string
	// InsecureSkipVerify accepts any certificate. For tests and
	// emergencies only: the bridge warns at start.
	InsecureSkipVerify bool
}

// IsZero reports whether nothing is configured (the transport's defaults
// apply).
func (c UpstreamConfig) IsZero() bool { return c == UpstreamConfig{} }

// Client builds the upstream client's tls.Config: TLS 1.2 at least, the
// system roots plus CAFile, the client certificate, the server name.
func (c UpstreamConfig) Client() (*tls.Config, error) {
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, errors.New("an upstream client certificate needs both its certificate and its key file")
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName, InsecureSkipVerify: c.InsecureSkipVerify}
	if c.CAFile != "" {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			// No system roots here (some minimal images): the bundle alone.
			pool = x509.NewCertPool()
		}
		if err := appendPEM(pool, c.CAFile); err != nil {
			return nil, err
		}
		tc.RootCAs = pool
	}
	if c.CertFile != "" {
		pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("upstream client certificate %s and key %s: %w", c.CertFile, c.KeyFile, plainPairError(err))
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}
