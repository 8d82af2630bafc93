package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"sync"
)

// UpstreamConfig is how the bridge dials an https upstream.
type UpstreamConfig struct {
	// CAFile is a PEM bundle trusted in addition to the system's roots
	// (a private CA; the public ones keep working).
	CAFile string
	// CertFile and KeyFile are the client certificate presented to an
	// upstream that asks for one (mutual TLS). They are read again when
	// they change (checked when a new connection presents them).
	CertFile, KeyFile string
	// ServerName is the name the upstream's certificate must carry (and the
	// SNI sent), when it is not the host of the upstream URL.
	ServerName string
	// InsecureSkipVerify accepts any certificate. For tests and
	// emergencies only: the bridge warns at start.
	InsecureSkipVerify bool
	// Logger receives client certificate reloads (default slog.Default()).
	Logger *slog.Logger
}

// IsZero reports whether nothing is configured (the transport's defaults
// apply).
func (c UpstreamConfig) IsZero() bool {
	return c.CAFile == "" && c.CertFile == "" && c.KeyFile == "" && c.ServerName == "" && !c.InsecureSkipVerify
}

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
		p := &clientPair{cert: c.CertFile, key: c.KeyFile, log: c.Logger}
		if p.log == nil {
			p.log = slog.Default()
		}
		p.stamp = stampsOf(p.cert, p.key)
		pair, err := p.load()
		if err != nil {
			return nil, err
		}
		p.cur = pair
		tc.GetClientCertificate = p.get
	}
	return tc, nil
}

// clientPair is the bridge's client certificate towards the upstream,
// read again when its files changed: a renewed short-lived certificate
// needs no restart. Connections already open keep theirs.
type clientPair struct {
	cert, key string
	log       *slog.Logger

	mu    sync.Mutex
	cur   *tls.Certificate
	stamp []fileStamp
}

func (p *clientPair) load() (*tls.Certificate, error) {
	pair, err := tls.LoadX509KeyPair(p.cert, p.key)
	if err != nil {
		return nil, fmt.Errorf("upstream client certificate %s and key %s: %w", p.cert, p.key, plainPairError(err))
	}
	return &pair, nil
}

// get is tls.Config.GetClientCertificate: the pair, reloaded first when a
// file changed (two stats per new connection that asks for it). A pair
// that does not load is refused with a WARN and the previous one sent.
func (p *clientPair) get(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := stampsOf(p.cert, p.key)
	if stampsEqual(now, p.stamp) {
		return p.cur, nil
	}
	p.stamp = now
	pair, err := p.load()
	if err != nil {
		p.log.Warn("TLS: the new upstream client certificate was refused; still presenting the previous one", "err", err.Error())
		return p.cur, nil
	}
	p.cur = pair
	p.log.Info("TLS: presenting a new client certificate to the upstream on new connections", "cert", p.cert)
	return p.cur, nil
}
