// Package tlsconf holds the bridge's TLS: the listener's certificate (loaded,
// reloaded on demand and when its files change, without dropping a
// connection), client certificate verification for --principal mtls, the
// upstream client's tls.Config, and the plain words a certificate or
// handshake failure is logged with.
package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Client certificate modes of the listener (--tls-client-auth).
const (
	// ClientAuthRequire refuses a handshake without a client certificate
	// the client CA verifies.
	ClientAuthRequire = "require"
	// ClientAuthRequest asks for a client certificate and verifies it when
	// one is given; clients without one still connect (and --principal
	// mtls refuses their requests with 401).
	ClientAuthRequest = "request"
)

// DefaultPollInterval is how often the listener's files are checked for a
// change (their modification time, size and identity).
const DefaultPollInterval = 5 * time.Second

// ListenerConfig configures a Listener.
type ListenerConfig struct {
	// CertFile and KeyFile are the PEM certificate chain (leaf first) and
	// its private key.
	CertFile, KeyFile string
	// ClientCAFile, when set, is the PEM bundle client certificates are
	// verified against; ClientAuth then says whether one is required
	// (default) or only requested.
	ClientCAFile string
	ClientAuth   string
	// PollInterval is how often the files are checked for a change
	// (default DefaultPollInterval; negative: never, Reload only).
	PollInterval time.Duration
	// Logger receives reloads and refused pairs (default slog.Default()).
	Logger *slog.Logger
}

// Listener serves the listener's current certificate. Its TLSConfig is
// used for every connection; each handshake reads the pair loaded last, so
// a reload never touches connections already established.
type Listener struct {
	cfg ListenerConfig
	log *slog.Logger
	cur atomic.Pointer[loaded]

	mu    sync.Mutex // serialises reloads
	stamp []fileStamp

	started  atomic.Bool
	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// loaded is one consistent generation: the pair, the client CAs and the
// tls.Config handed to the handshakes.
type loaded struct {
	leaf *x509.Certificate
	conf *tls.Config
}

// ParseClientAuth checks a --tls-client-auth value ("" is require).
func ParseClientAuth(mode string) (tls.ClientAuthType, error) {
	switch mode {
	case "", ClientAuthRequire:
		return tls.RequireAndVerifyClientCert, nil
	case ClientAuthRequest:
		return tls.VerifyClientCertIfGiven, nil
	}
	return 0, fmt.Errorf("client certificate mode %q: want %s or %s", mode, ClientAuthRequire, ClientAuthRequest)
}

// NewListener loads the pair (and client CAs) once: an unreadable or
// mismatched pair is an error here, at start. Call Watch to follow the
// files, Close to stop watching.
func NewListener(cfg ListenerConfig) (*Listener, error) {
	if cfg.CertFile == "" || cfg.KeyFile == "" {
		return nil, errors.New("a TLS listener needs both a certificate and a key file")
	}
	if cfg.ClientAuth != "" && cfg.ClientCAFile == "" {
		return nil, errors.New("client certificates cannot be verified without a client CA bundle")
	}
	if _, err := ParseClientAuth(cfg.ClientAuth); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	l := &Listener{cfg: cfg, log: cfg.Logger, stop: make(chan struct{}), done: make(chan struct{})}
	stamp := l.stamps()
	g, err := l.load()
	if err != nil {
		return nil, err
	}
	l.cur.Store(g)
	l.stamp = stamp
	return l, nil
}

// files are the watched paths.
func (l *Listener) files() []string {
	fs := []string{l.cfg.CertFile, l.cfg.KeyFile}
	if l.cfg.ClientCAFile != "" {
		fs = append(fs, l.cfg.ClientCAFile)
	}
	return fs
}

// load reads the files into a new generation.
func (l *Listener) load() (*loaded, error) {
	pair, err := tls.LoadX509KeyPair(l.cfg.CertFile, l.cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("certificate %s and key %s: %w", l.cfg.CertFile, l.cfg.KeyFile, plainPairError(err))
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Errorf("certificate %s: %w", l.cfg.CertFile, err)
		}
	}
	conf := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{pair},
		// The per-handshake config replaces the server's: ALPN as
		// http.Server.ServeTLS would offer it.
		NextProtos: []string{"h2", "http/1.1"},
	}
	if l.cfg.ClientCAFile != "" {
		pool, err := LoadPool(l.cfg.ClientCAFile)
		if err != nil {
			return nil, err
		}
		conf.ClientCAs = pool
		conf.ClientAuth, _ = ParseClientAuth(l.cfg.ClientAuth)
	}
	return &loaded{leaf: leaf, conf: conf}, nil
}

// plainPairError words the usual pair mistakes for an operator.
func plainPairError(err error) error {
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
		return err
	}
	msg := err.Error()
	switch {
	case contains(msg, "private key does not match public key"):
		return errors.New("the key does not belong to the certificate")
	case contains(msg, "failed to find any PEM data"):
		return errors.New("no PEM data found (want PEM files: -----BEGIN CERTIFICATE----- and a -----BEGIN ... PRIVATE KEY-----)")
	}
	return err
}

// TLSConfig is the server's tls.Config: TLS 1.2 at least, and each
// handshake served by the generation loaded last.
func (l *Listener) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return l.cur.Load().conf, nil
		},
	}
}

// Leaf is the certificate served now.
func (l *Listener) Leaf() *x509.Certificate { return l.cur.Load().leaf }

// Reload reads the files again. A pair that cannot be used (unreadable, not
// PEM, a key of another certificate) is refused with a WARN and the one
// loaded before is kept; the error says why. Safe for concurrent use
// (SIGHUP and the file watch).
func (l *Listener) Reload() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reloadLocked("on demand")
}

func (l *Listener) reloadLocked(why string) error {
	l.stamp = l.stamps()
	g, err := l.load()
	if err != nil {
		l.log.Warn("TLS: the new certificate was refused; still serving the previous one",
			"reason", why, "err", err.Error(), "serving_subject", l.Leaf().Subject.String(), "serving_not_after", l.Leaf().NotAfter)
		return err
	}
	old := l.cur.Swap(g)
	if old.leaf.Equal(g.leaf) {
		l.log.Info("TLS: certificate files read again; the certificate is unchanged", "reason", why, "subject", g.leaf.Subject.String())
		return nil
	}
	l.log.Info("TLS: serving a new certificate to new connections (open ones keep theirs)", "reason", why,
		"subject", g.leaf.Subject.String(), "not_after", g.leaf.NotAfter, "previous_not_after", old.leaf.NotAfter)
	return nil
}

// Watch checks the files every PollInterval until Close and reloads when one
// changed. It returns at once when polling is off.
func (l *Listener) Watch() {
	if l.cfg.PollInterval < 0 || !l.started.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer close(l.done)
		t := time.NewTicker(l.cfg.PollInterval)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				l.poll()
			}
		}
	}()
}

// poll reloads when a file's stamp changed since the last load.
func (l *Listener) poll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.stamps()
	if stampsEqual(now, l.stamp) {
		return
	}
	_ = l.reloadLocked("the files changed")
}

// Close stops Watch (and waits for it). The TLSConfig keeps serving the
// last pair.
func (l *Listener) Close() {
	l.stopOnce.Do(func() {
		close(l.stop)
		if l.started.Load() {
			<-l.done
		}
	})
}

// fileStamp is what tells a changed file: a replaced file (rename, a
// Kubernetes secret's symlink swap) is another file; one rewritten in place
// has another modification time or size.
type fileStamp struct {
	fi  os.FileInfo
	err bool
}

func (l *Listener) stamps() []fileStamp { return stampsOf(l.files()...) }

func stampsOf(files ...string) []fileStamp {
	var out []fileStamp
	for _, f := range files {
		fi, err := os.Stat(f)
		out = append(out, fileStamp{fi: fi, err: err != nil})
	}
	return out
}

func stampsEqual(a, b []fileStamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		switch {
		case a[i].err || b[i].err:
			// A missing file (mid-rotation) is no change to act on until
			// it is back.
			if a[i].err != b[i].err && !a[i].err {
				return false
			}
		case !os.SameFile(a[i].fi, b[i].fi), !a[i].fi.ModTime().Equal(b[i].fi.ModTime()), a[i].fi.Size() != b[i].fi.Size():
			return false
		}
	}
	return true
}
