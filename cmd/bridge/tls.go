package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/internal/identity"
	"github.com/tasksbridge/tasksbridge/internal/tlsconf"
	"github.com/tasksbridge/tasksbridge/router"
)

// tlsFlags are the TLS flags of `bridge serve`: the listener's certificate
// and client certificates (--principal mtls), and how the bridge dials an
// https upstream.
func tlsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "tls-cert", EnvVars: []string{"TASKSBRIDGE_TLS_CERT"},
			Usage: "serve https with this certificate chain (`FILE`, PEM, leaf first; with --tls-key); TLS 1.2 or newer. " +
				"The files are read again when they change (checked every --tls-reload-interval) and on SIGHUP; a pair that does not load is " +
				"refused with a WARN and the previous one kept; open connections keep theirs. /metrics on --metrics-listen stays plain http"},
		&cli.StringFlag{Name: "tls-key", EnvVars: []string{"TASKSBRIDGE_TLS_KEY"},
			Usage: "private key `FILE` (PEM) of --tls-cert"},
		&cli.StringFlag{Name: "tls-client-ca", EnvVars: []string{"TASKSBRIDGE_TLS_CLIENT_CA"},
			Usage: "verify client certificates against the CA certificates in `FILE` (PEM; read again with --tls-cert); " +
				"what --principal mtls needs"},
		&cli.StringFlag{Name: "tls-client-auth", EnvVars: []string{"TASKSBRIDGE_TLS_CLIENT_AUTH"},
			Usage: "with --tls-client-ca: require (every client presents a certificate the CA signed, else the handshake fails; the default) " +
				"or request (a certificate is asked for and verified when given; clients without one connect, and --principal mtls refuses their requests with 401)"},
		&cli.DurationFlag{Name: "tls-reload-interval", Value: tlsconf.DefaultPollInterval, EnvVars: []string{"TASKSBRIDGE_TLS_RELOAD_INTERVAL"},
			Usage: "how often the --tls-cert, --tls-key and --tls-client-ca files are checked for a change (0 or less: only on SIGHUP)"},
		&cli.StringFlag{Name: "upstream-ca", EnvVars: []string{"TASKSBRIDGE_UPSTREAM_CA"},
			Usage: "trust the CA certificates in `FILE` (PEM) for an https --upstream, in addition to the system's roots (a private CA)"},
		&cli.StringFlag{Name: "upstream-client-cert", EnvVars: []string{"TASKSBRIDGE_UPSTREAM_CLIENT_CERT"},
			Usage: "client certificate `FILE` (PEM) the bridge presents to an https upstream that requires one (with --upstream-client-key); " +
				"read again when it changes, for new connections"},
		&cli.StringFlag{Name: "upstream-client-key", EnvVars: []string{"TASKSBRIDGE_UPSTREAM_CLIENT_KEY"},
			Usage: "private key `FILE` (PEM) of --upstream-client-cert"},
		&cli.StringFlag{Name: "upstream-tls-server-name", EnvVars: []string{"TASKSBRIDGE_UPSTREAM_TLS_SERVER_NAME"},
			Usage: "the `NAME` the upstream's certificate must carry (also sent as SNI), when it is not the host of --upstream " +
				"(an upstream dialled by address); it applies to every https connection the bridge opens for the upstream, OAuth metadata included"},
		&cli.BoolFlag{Name: "upstream-tls-insecure-skip-verify", EnvVars: []string{"TASKSBRIDGE_UPSTREAM_TLS_INSECURE_SKIP_VERIFY"},
			Usage: "accept any certificate from the upstream, unverified (tests only: anyone on the path can then impersonate it and read the tokens the bridge forwards; logged as a WARN at start)"},
	}
}

// listenerTLS is the listener's TLS (nil: plain http).
type listenerTLS struct {
	l   *tlsconf.Listener
	log *slog.Logger
}

// Reload reads the listener's certificate files again (SIGHUP); nil
// without TLS.
func (t *listenerTLS) Reload() error {
	if t == nil {
		return nil
	}
	return t.l.Reload()
}

// Close stops watching the files.
func (t *listenerTLS) Close() {
	if t != nil {
		t.l.Close()
	}
}

// serve serves srv on ln: https with the listener's certificate, or plain
// http without TLS. The scheme is returned for the printed URL.
func (t *listenerTLS) configure(srv *http.Server) (scheme string) {
	if t == nil {
		return "http"
	}
	srv.TLSConfig = t.l.TLSConfig()
	// net/http logs each failed handshake on its own log (a client
	// without a certificate, a scanner): summed up as a rate-limited WARN.
	srv.ErrorLog = (&tlsconf.HandshakeLog{Log: t.log}).Logger()
	return "https"
}

// serveOn is srv.Serve, or srv.ServeTLS when configure set a TLSConfig
// (which also offers HTTP/2).
func serveOn(srv *http.Server, ln net.Listener) error {
	if srv.TLSConfig != nil {
		return srv.ServeTLS(ln, "", "")
	}
	return srv.Serve(ln)
}

// readTLSFlags checks the TLS flags, sets cfg.UpstreamTLS, and loads and
// starts watching the listener's certificate (nil without --tls-cert).
func readTLSFlags(c *cli.Context, logger *slog.Logger, cfg *router.Config) (*listenerTLS, error) {
	cert, key, ca, auth := c.String("tls-cert"), c.String("tls-key"), c.String("tls-client-ca"), c.String("tls-client-auth")
	switch {
	case (cert == "") != (key == ""):
		return nil, errors.New("--tls-cert and --tls-key go together: set both, or neither for plain http")
	case ca != "" && cert == "":
		return nil, errors.New("--tls-client-ca needs --tls-cert and --tls-key: client certificates are only seen over https")
	case auth != "" && ca == "":
		return nil, errors.New("--tls-client-auth needs --tls-client-ca, the CA that signs the client certificates")
	case cert != "" && c.Bool("stdio"):
		return nil, errors.New("--tls-cert has no effect with --stdio (no listener)")
	case strings.TrimSpace(c.String("principal")) == identity.ModeMTLS && ca == "":
		return nil, errors.New("--principal mtls needs --tls-cert, --tls-key and --tls-client-ca: the principal is the verified client certificate's subject")
	}
	if _, err := tlsconf.ParseClientAuth(auth); err != nil {
		return nil, fmt.Errorf("--tls-client-auth: %w", err)
	}

	up := tlsconf.UpstreamConfig{CAFile: c.String("upstream-ca"), CertFile: c.String("upstream-client-cert"), KeyFile: c.String("upstream-client-key"),
		ServerName: c.String("upstream-tls-server-name"), InsecureSkipVerify: c.Bool("upstream-tls-insecure-skip-verify"), Logger: logger}
	if !up.IsZero() {
		if !strings.HasPrefix(strings.ToLower(cfg.Upstream), "https://") {
			return nil, errors.New("--upstream-ca, --upstream-client-cert, --upstream-client-key, --upstream-tls-server-name and --upstream-tls-insecure-skip-verify apply to an https:// --upstream only")
		}
		tc, err := up.Client()
		if err != nil {
			return nil, fmt.Errorf("upstream TLS: %w", err)
		}
		cfg.UpstreamTLS = tc
		if up.InsecureSkipVerify {
			logger.Warn("--upstream-tls-insecure-skip-verify: the upstream's certificate is NOT verified; anyone on the network path can impersonate the upstream and read the credentials the bridge forwards to it; use --upstream-ca (and --upstream-tls-server-name) instead",
				"upstream", cfg.Upstream)
		}
	}

	if cert == "" {
		return nil, nil
	}
	interval := c.Duration("tls-reload-interval")
	if interval <= 0 {
		interval = -1
	}
	l, err := tlsconf.NewListener(tlsconf.ListenerConfig{CertFile: cert, KeyFile: key, ClientCAFile: ca, ClientAuth: auth,
		PollInterval: interval, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("--tls-cert: %w", err)
	}
	l.Watch()
	leaf := l.Leaf()
	args := []any{"subject", leaf.Subject.String(), "not_after", leaf.NotAfter}
	if ca != "" {
		mode := auth
		if mode == "" {
			mode = tlsconf.ClientAuthRequire
		}
		args = append(args, "client_certificates", mode)
	}
	logger.Info("TLS: serving https", args...)
	return &listenerTLS{l: l, log: logger}, nil
}

// ReloadTLS reads the listener's certificate files again: what SIGHUP
// does. Nil for plain http.
func (h *httpServing) ReloadTLS() error { return h.tls.Reload() }
