package router

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/era"
	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	modernface "github.com/tasksbridge/tasksbridge/face/modern"
	"github.com/tasksbridge/tasksbridge/internal/cmdline"
	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/internal/identity"
	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/ops/metrics"
	"github.com/tasksbridge/tasksbridge/ops/oplog"
	"github.com/tasksbridge/tasksbridge/runtime/coord"
	"github.com/tasksbridge/tasksbridge/runtime/credseal"
	"github.com/tasksbridge/tasksbridge/runtime/upcred"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// DefaultProbeTimeout bounds one upstream era probe.
const DefaultProbeTimeout = 10 * time.Second

// SupportedVersions are the protocol versions the bridge's endpoint serves,
// newest first: the modern revision (the modern face, or a modern upstream
// passed through) and the legacy revisions (the legacy face, or a legacy
// upstream passed through). -32022 errors name them (M-38).
var SupportedVersions = []string{modern.ProtocolVersion, legacy.ProtocolVersion, "2025-06-18", "2025-03-26", "2024-11-05"}

// Config configures a Server. Exactly one of Upstream and UpstreamCommand
// names the upstream; exactly one of DataDir and Store the durable index.
type Config struct {
	// Upstream is the upstream's Streamable HTTP endpoint URL.
	Upstream string
	// UpstreamCommand runs a stdio upstream ("prog args", quotes group
	// words). Same-era traffic cannot be passed through to it (see the
	// package doc).
	UpstreamCommand string
	// UpstreamEra is "auto" (default: probe server/discover, fall back to
	// legacy), "legacy" or "modern" (pinned, never probed).
	UpstreamEra string
	// ProbeTimeout bounds one era probe (default DefaultProbeTimeout).
	ProbeTimeout time.Duration

	// DataDir holds the Badger store (created if needed).
	DataDir string
	// Store is an open store (tests, embedding); Close does not close it.
	Store sessionmap.Store
	// Coord shares the legacy face's task watchers among the replicas
	// that share Store (a Redis): one replica reads each upstream task, the
	// others relay its snapshots (runtime/watch). Nil: this process
	// watches its tasks alone. Close does not close it.
	Coord coord.Coordinator

	// Metrics receives the bridge's metrics (default: a fresh metrics.New).
	Metrics *metrics.Metrics
	// Logger defaults to slog.Default().
	Logger *slog.Logger

	// AllowedOrigins are the Origin values (scheme://host[:port]) accepted
	// besides loopback ones, on every path (--allowed-origin; the rule is
	// edge.Policy's). "*" is refused.
	AllowedOrigins []string
	// AllowedHosts are the Host names (optionally :port) accepted besides
	// loopback ones (--allowed-host): on a loopback listener they are the
	// only others accepted, and once set they are the only others on any
	// listener (edge.Policy). "*" is refused.
	AllowedHosts []string
	// TrustedProxies are the peers (CIDR prefixes or addresses,
	// --trusted-proxy) whose X-Forwarded-For/-Proto/-Host, Forwarded and
	// IdentityHeader are believed; from every other peer the bridge deletes
	// them before anything reads them.
	TrustedProxies []string
	// PublicURL is the /mcp URL clients dial (--public-url), e.g.
	// https://mcp.example.com/mcp: the audience of tokens and the base of
	// the bridge's OAuth metadata URL. "": derived per request from the
	// scheme, the Host and the path (a trusted proxy's X-Forwarded-Proto and
	// -Host win).
	PublicURL string
	// Resolver decides each HTTP request's principal (--principal); nil:
	// identity.AuthorizationHeader{}, a hash of the Authorization header.
	Resolver identity.Resolver
	// IdentityHeader is the header a trusted gateway puts the user into
	// (--principal header:NAME): deleted from requests of untrusted peers.
	IdentityHeader string
	// NoForwardedHeaders stops the bridge adding X-Forwarded-For, -Proto and
	// -Host to its upstream requests (--no-forwarded-headers). traceparent,
	// tracestate and X-Request-Id are passed on regardless.
	NoForwardedHeaders bool
	// WellKnown, when set, serves /.well-known/ (the OAuth protected
	// resource metadata relay, RFC 9728, internal/oauthmeta) behind the
	// edge's Host, Origin and trusted-proxy policies. Nil: not mounted.
	WellKnown http.Handler
	// OAuthAuthServerProxy also proxies the upstream's 2025-03-26-era
	// authorization server endpoints (/.well-known/oauth-authorization-server,
	// /.well-known/openid-configuration, /authorize, /token, /register) to
	// its origin, for clients that look for them at the MCP server's origin.
	OAuthAuthServerProxy bool
	// AuthServerProxy, when set, serves the 2025-03-26 authorization server
	// endpoints /authorize, /token and /register (internal/oauthmeta;
	// --oauth-proxy-auth-server). Nil: not mounted.
	AuthServerProxy http.Handler
	// MaxBodyBytes bounds a request body (413 above it; default 4 MiB).
	MaxBodyBytes int64
	// UpstreamTimeout bounds an upstream's silence on one request, of either
	// era (upstream/modern.Client.Timeout, upstream/legacy.Config.Timeout:
	// zero selects their DefaultTimeout, negative means no bound).
	UpstreamTimeout time.Duration
	// KeepAlive, SessionIdleTimeout and StatusNotifications configure the
	// legacy face (face/legacy.Config; zero: its defaults).
	KeepAlive           time.Duration
	SessionIdleTimeout  time.Duration
	StatusNotifications bool

	// Transport is the base RoundTripper towards an HTTP upstream (default:
	// a clone of http.DefaultTransport with a connection pool sized for the
	// bridge's concurrency, see upstreamTransport).
	Transport http.RoundTripper
	// UpstreamTLS is the tls.Config towards an https upstream (the CA, the
	// client certificate, the server name: tlsconf.UpstreamConfig). Nil:
	// the system's roots, TLS 1.2 at least. Ignored with Transport.
	UpstreamTLS *tls.Config

	// CredentialKey seals the clients' upstream credentials the store keeps
	// (runtime/credseal.Load: --credential-key-file or
	// TASKSBRIDGE_CREDENTIAL_KEY), so a refreshed token reaches the tasks
	// on every replica and after a restart. Nil: memory only.
	CredentialKey *credseal.Sealer

	// Legacy and Modern adjust the faces' configurations last (tests,
	// embedding). Upstream, store and hooks are set by the server.
	Legacy func(*legacyface.Config)
	Modern func(*modernface.Options)
}

// Server is the bridge's composition root: one http.Handler for /mcp that
// routes every request to one of the four paths, plus /healthz, /readyz
// and /metrics. Create it with New; stop it with Shutdown, then Close.
type Server struct {
	cfg    Config
	log    *slog.Logger
	m      *metrics.Metrics
	store  *meteredStore
	target string
	url    *url.URL // nil for a stdio upstream

	ownStore bool
	upMeter  *upstreamMeter
	meter    *wireMeter
	sel      *era.Selector
	memo     *eraMemo
	authEra  authProbe // the era probe was refused for its credentials (autherr.go)
	modernUp *modernup.Client
	pool     *legacyup.Pool
	creds    *upcred.Keeper // shared by both faces (creds.go)
	legacy   *legacyface.Bridge
	modernF  *modernface.Face
	proxy    *httputil.ReverseProxy
	relay    *oauthmeta.Relay // OAuth discovery relay (nil: stdio upstream, or Config.WellKnown)
	maxBody  int64
	edge     *edge.Edge

	draining atomic.Bool
	// streams is cancelled when shutdown starts: passthrough streams that
	// only end when the client leaves (GET, subscriptions/listen).
	streams      context.Context
	cancelStream context.CancelFunc
	// hard is cancelled when Close runs: every passthrough request.
	hard       context.Context
	cancelHard context.CancelFunc

	closeOnce   sync.Once
	modernClose sync.Once
	closeErr    error

	readyMu    sync.Mutex
	readyAt    time.Time
	readyErr   error  // the last check's failure
	readyFails int    // consecutive failed checks
	readyNote  string // the last check's view of the upstream (checkUpstream), "" before the first
	// readyCheck and readyReuse (after a good, a failed check) are
	// checkReady, readyCache and readyRetry; tests replace them.
	readyCheck func(context.Context) error
	readyReuse [2]time.Duration
}

// New builds the server: it opens the store and prepares the upstream
// clients and both faces. It does not contact the upstream (the first
// request, or /readyz, probes its era).
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Upstream == "" && cfg.UpstreamCommand == "":
		return nil, errors.New("server: no upstream: set Upstream (a URL) or UpstreamCommand")
	case cfg.Upstream != "" && cfg.UpstreamCommand != "":
		return nil, errors.New("server: set only one of Upstream and UpstreamCommand")
	}
	mode, err := era.ParseMode(cfg.UpstreamEra)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ProbeTimeout <= 0 {
		cfg.ProbeTimeout = DefaultProbeTimeout
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = legacyface.DefaultMaxBodyBytes
	}
	m := cfg.Metrics
	if m == nil {
		m = metrics.New(metrics.Options{})
	}
	s := &Server{cfg: cfg, log: cfg.Logger, m: m, maxBody: cfg.MaxBodyBytes, readyReuse: [2]time.Duration{readyCache, readyRetry}}
	s.readyCheck = s.checkReady
	s.streams, s.cancelStream = context.WithCancel(context.Background())
	s.hard, s.cancelHard = context.WithCancel(context.Background())
	s.sel = &era.Selector{Mode: mode}
	s.upMeter = &upstreamMeter{m: m}
	if mode == era.Auto {
		s.upMeter.invalidate = s.sel.Invalidate
	}

	var argv []string
	if cfg.Upstream != "" {
		u, err := url.Parse(cfg.Upstream)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("server: upstream %q is not an http(s) URL", cfg.Upstream)
		}
		s.url, s.target = u, cfg.Upstream
	} else {
		if argv, err = cmdline.Split(cfg.UpstreamCommand); err != nil {
			return nil, fmt.Errorf("server: upstream command: %w", err)
		}
		if len(argv) == 0 {
			return nil, errors.New("server: upstream command is empty")
		}
		// The legacy face names a command upstream so in its task records.
		s.target = "command " + cfg.UpstreamCommand
	}

	// Operators see each change of the upstream's reachability once.
	s.upMeter.health = &oplog.UpstreamHealth{Log: cfg.Logger, Target: s.target}

	// Store.
	var st sessionmap.Store
	switch {
	case cfg.Store != nil && cfg.DataDir != "":
		return nil, errors.New("server: set only one of DataDir and Store")
	case cfg.Store != nil:
		st = cfg.Store
	case cfg.DataDir != "":
		err := m.StoreOp("open", func() error {
			b, err := sessionmap.OpenBadger(cfg.DataDir, sessionmap.WithLogger(cfg.Logger))
			st = b
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("server: open data dir: %w", err)
		}
		s.ownStore = true
	default:
		return nil, errors.New("server: no store: set DataDir or Store")
	}
	s.store = newMeteredStore(st, m, cfg.Logger)
	s.meter = newWireMeter(m, s.store)
	s.meter.refusals = &oplog.Refusals{Log: cfg.Logger}
	if mode == era.Auto {
		s.memo = newEraMemo(s.store, s.target, cfg.Logger)
		lctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s.memo.load(lctx)
		cancel()
	}
	fail := func(err error) (*Server, error) {
		_ = s.Close()
		return nil, err
	}

	s.creds = newKeeper(cfg, st, s.target, cfg.Logger)

	// Upstream clients, all metered.
	base := upstreamTransport(cfg.Transport, cfg.UpstreamTLS, cfg.Logger)
	// forwardTransport: the translated paths' upstream requests carry the
	// client's trace and X-Forwarded-* headers (edge.Request.ForwardHeader).
	hc := &http.Client{Transport: forwardTransport{next: &meterTransport{next: base, u: s.upMeter}}}
	if s.url != nil && cfg.WellKnown == nil {
		// OAuth discovery through the bridge (internal/oauthmeta): the
		// upstream's protected resource metadata at the bridge's well-known
		// URIs, and the relay every path answers upstream refusals with.
		s.relay = oauthmeta.New(oauthmeta.Config{
			Upstream:        s.url,
			Client:          &http.Client{Transport: base},
			PublicURL:       edge.PublicURLOf,
			ProxyAuthServer: cfg.OAuthAuthServerProxy,
			Logger:          cfg.Logger,
		})
	}
	cfg.Resolver = keyedResolver(cfg.Resolver, st) // principal_key.go
	if s.edge, err = newEdge(cfg, s.relay); err != nil {
		return fail(fmt.Errorf("server: %w", err))
	}
	newCmd := func() *exec.Cmd { return exec.Command(argv[0], argv[1:]...) }
	if s.url != nil {
		s.modernUp = modernup.NewHTTP(cfg.Upstream, hc)
		s.modernUp.Timeout = cfg.UpstreamTimeout
		// The store shares each principal's upstream session with every bridge
		// process on the same store (and with this one after a restart).
		// The client's token goes to the one server it was issued for, at
		// the bridge's public URL (its audience): the gateway pattern, as on
		// the legacy face — not a token passed on to another API.
		s.pool, err = legacyup.NewPool(legacyup.Config{Target: s.target, Endpoint: cfg.Upstream, HTTPClient: hc, Logger: cfg.Logger, Store: s.store,
			ForwardAuthorization: true, Credentials: s.creds, Timeout: cfg.UpstreamTimeout})
	} else {
		s.modernUp = modernup.NewCommand(s.target, newCmd)
		s.modernUp.Timeout = cfg.UpstreamTimeout
		dial := s.modernUp.Dial
		s.modernUp.Dial = func(ctx context.Context) (mcp.Connection, error) {
			c, err := dial(ctx)
			if err != nil {
				return nil, err
			}
			return newMeterConn(c, s.upMeter), nil
		}
		s.pool, err = legacyup.NewPool(legacyup.Config{Target: s.target, Logger: cfg.Logger, Timeout: cfg.UpstreamTimeout,
			NewTransport: func() mcp.Transport {
				return meterConnTransport{t: &mcp.CommandTransport{Command: newCmd()}, u: s.upMeter}
			}})
	}
	if err != nil {
		return fail(fmt.Errorf("server: %w", err))
	}
	s.sel.Probe = s.probe

	// Faces.
	lc := legacyface.Config{
		UpstreamClient: s.modernUp,
		Store:          s.store,
		Logger:         cfg.Logger,
		MaxBodyBytes:   cfg.MaxBodyBytes,
		AllowedOrigins: cfg.AllowedOrigins,
		// The edge applied the Host policy (with --allowed-host) already;
		// go-sdk's own loopback check would refuse an allowed host.
		DisableHostCheck:    true,
		SessionIdleTimeout:  cfg.SessionIdleTimeout,
		KeepAlive:           cfg.KeepAlive,
		StatusNotifications: cfg.StatusNotifications,
		Credentials:         s.creds,
	}
	lc.Outbox.Pending, lc.Outbox.Retry = m.OutboxPending, m.OutboxRetry
	// The metering wrapper hides the store's event methods: hand the face
	// the store's own, so the events of resumable streams are shared by the
	// replicas on one Redis and a client resumes on any of them (L-47, L-48),
	// not only on the replica that died.
	if es, ok := st.(sessionmap.EventStore); ok {
		lc.Events = es
	}
	if cfg.Legacy != nil {
		cfg.Legacy(&lc)
	}
	lc.Watch.Coord = cfg.Coord
	if cfg.Coord != nil {
		lc.Outbox.Leases = cfg.Coord // one replica sends each owed upstream cancel
	}
	lc.Hooks.Session = func(ev legacyface.SessionEvent) {
		if ev.Kind == "end" {
			m.SessionClosed(metrics.EraLegacy)
			if ev.ID != "" {
				// An expired or deleted session's clientInfo is not
				// needed any more.
				s.meter.sessions.take(ev.ID)
			}
		} else {
			m.SessionOpened(metrics.EraLegacy)
		}
	}
	lc.Hooks.Refused = func(ev legacyface.RefusedEvent) { m.Refused(ev.Limit) }
	if s.legacy, err = legacyface.New(lc); err != nil {
		return fail(fmt.Errorf("server: legacy face: %w", err))
	}
	mo := modernface.Options{
		Upstream:          s.pool,
		Store:             s.store,
		Logger:            cfg.Logger,
		AllowedOrigins:    cfg.AllowedOrigins,
		SupportedVersions: SupportedVersions,
	}
	if cfg.Modern != nil {
		cfg.Modern(&mo)
	}
	if s.modernF, err = modernface.New(mo); err != nil {
		return fail(fmt.Errorf("server: modern face: %w", err))
	}
	if s.url != nil {
		s.proxy = s.newProxy(base)
	}
	return s, nil
}

// probe is the era selector's probe: server/discover, legacy on any
// non-modern outcome (upstream/modern.ProbeEra, era.Upstream), sent with the
// credential of the request that needs the era (withProbeCredential). A
// 401/403 decides nothing: the era stays unknown (autherr.go).
func (s *Server) probe(ctx context.Context) (era.Era, error) {
	credential := probeCredential(ctx)
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, ctxNoEraFeedback, true), s.cfg.ProbeTimeout)
	defer cancel()
	got, err := s.modernUp.ProbeEraAs(ctx, credential)
	if got != era.Unknown {
		s.authEra.decided()
		s.log.Info("upstream era", "upstream", s.target, "era", got.String())
	}
	if got == era.Unknown && probeRefused(err) && s.authEra.refused() {
		s.log.Info("upstream requires authorization: its era is probed again with the next request that carries credentials; requests without them get its challenge",
			"upstream", s.target, "probe_had_credentials", credential != "")
	}
	if got == era.Legacy && s.url == nil {
		// The probe's own process is not needed: the legacy pool starts its
		// sessions' processes.
		_ = s.modernUp.Close()
	}
	return got, err
}

// upstreamEra returns the upstream's era (cached, or pinned, or probed now
// with credential, the Authorization of the request that needs it; "" for
// none). While the upstream cannot be probed, the era remembered in the
// store answers (eramemo.go), so the faces serve what the index holds. An
// upstream that refuses the probe's credentials (401/403) is reachable: the
// remembered era answers when there is one (the face then relays the
// upstream's refusal of the request itself), else the error carries the
// refusal (*oauthmeta.UpstreamAuthError) for the router to relay.
func (s *Server) upstreamEra(ctx context.Context, credential string) (era.Era, error) {
	ctx = withProbeCredential(ctx, credential)
	if s.memo == nil {
		return s.sel.Era(ctx)
	}
	if s.sel.Cached() == era.Unknown {
		if got, recent := s.memo.fallback(); got != era.Unknown && recent {
			return got, nil
		}
	}
	got, err := s.sel.Era(ctx)
	if err != nil && probeRefused(err) {
		if rem, _ := s.memo.fallback(); rem != era.Unknown {
			return rem, nil
		}
		return got, err
	}
	if err != nil {
		if rem := s.memo.failed(err); rem != era.Unknown {
			return rem, nil
		}
		return got, err
	}
	s.memo.probed(ctx, got)
	return got, nil
}

// Metrics returns the server's metrics.
func (s *Server) Metrics() *metrics.Metrics { return s.m }

// Store returns the (metered) durable index.
func (s *Server) Store() sessionmap.Store { return s.store }

// Target names the upstream (its URL or "command ...").
func (s *Server) Target() string { return s.target }

// Handler returns the /mcp endpoint.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveMCP) }

// MetricsHandler returns the /metrics handler.
func (s *Server) MetricsHandler() http.Handler { return s.m.Handler() }

// Mux serves /mcp, /healthz, /readyz and, when withMetrics, /metrics.
func (s *Server) Mux(withMetrics bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.Handler())
	// Hooks of the OAuth relay (internal/oauthmeta), behind the edge's
	// Host, Origin and trusted-proxy policies.
	if s.relay != nil {
		for _, p := range s.relay.Patterns() {
			mux.Handle(p, s.edge.Guard(s.relay))
		}
	}
	if s.cfg.WellKnown != nil {
		mux.Handle("/.well-known/", s.edge.Guard(s.cfg.WellKnown))
	}
	if s.cfg.AuthServerProxy != nil {
		for _, p := range []string{"/authorize", "/token", "/register"} {
			mux.Handle(p, s.edge.Guard(s.cfg.AuthServerProxy))
		}
	}
	mux.Handle("/healthz", s.Healthz())
	mux.Handle("/readyz", s.Readyz())
	if withMetrics {
		mux.Handle("/metrics", s.MetricsHandler())
	}
	return mux
}

// Drain is the first step of a graceful stop: /readyz fails at once (503
// "draining", so load balancers take this replica out of rotation) and every
// new /mcp request gets HTTP 503 with Retry-After and a JSON-RPC error that
// tells the client to send it again (another replica, or this one after its
// restart, answers it), while the listener stays open: a client that has not
// seen the readiness change yet gets an answer it can act on, not a refused
// connection. Requests already in flight, blocked waits among them, go on.
// Call Shutdown after the shutdown delay.
func (s *Server) Drain() { s.draining.Store(true) }

// Draining reports whether Drain (or Shutdown, Close) has been called.
func (s *Server) Draining() bool { return s.draining.Load() }

// HandedBack is the number of client requests Shutdown handed back (blocked
// waits answered with "call again"), for the stop report.
func (s *Server) HandedBack() int64 { return s.meter.handedBack.Load() }

// Shutdown starts a graceful stop: new requests get 503 (Drain), the legacy
// face hands back blocked waits and closes its sessions, the modern face ends
// its listens, passthrough streams (GET, subscriptions/listen) are cut so that
// an http.Server.Shutdown can finish. Requests in flight continue; call the
// HTTP server's Shutdown next, then Close.
func (s *Server) Shutdown(ctx context.Context) error {
	s.draining.Store(true)
	// The waits handed back from here on are answered with a -32603 the
	// client acts on (call again); they are part of a normal stop, not
	// failures to warn about (observe.go).
	s.meter.stopping.Store(true)
	s.cancelStream()
	var errs []error
	if s.legacy != nil {
		if err := s.legacy.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("server: %w", err))
		}
	}
	s.closeModernFace()
	return errors.Join(errs...)
}

func (s *Server) closeModernFace() {
	if s.modernF != nil {
		s.modernClose.Do(s.modernF.Close)
	}
}

// Close cuts what is still in flight and closes the faces, the upstream
// clients and (when the server opened it) the store.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.draining.Store(true)
		s.meter.stopping.Store(true)
		s.cancelStream()
		s.cancelHard()
		var errs []error
		if s.legacy != nil {
			if err := s.legacy.Close(); err != nil {
				errs = append(errs, fmt.Errorf("server: %w", err))
			}
		}
		s.closeModernFace()
		s.creds.Close()
		if s.pool != nil {
			if err := s.pool.Close(); err != nil {
				errs = append(errs, fmt.Errorf("server: close legacy upstream pool: %w", err))
			}
		}
		if s.modernUp != nil {
			if err := s.modernUp.Close(); err != nil {
				errs = append(errs, fmt.Errorf("server: close upstream client: %w", err))
			}
		}
		if s.ownStore && s.store != nil {
			if err := s.store.Close(); err != nil {
				errs = append(errs, fmt.Errorf("server: close store: %w", err))
			}
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// Healthz answers 200 while the process is up: liveness, never the
// upstream's or the store's state (a restart would not fix either). With
// ?verbose it adds, in plain text, the readiness verdict and what the last
// readiness check saw of the upstream (the same cached check as /readyz, so
// probing it costs the upstream nothing more).
func (s *Server) Healthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !r.URL.Query().Has("verbose") {
			_, _ = w.Write([]byte("ok\n"))
			return
		}
		err := s.ready(r.Context())
		verdict := "ready"
		if err != nil {
			verdict = "not ready: " + err.Error()
		}
		fmt.Fprintf(w, "ok\n%s\nupstream: %s\n", verdict, s.upstreamState())
	})
}

// Readiness means "this replica can serve": its store answers and it is not
// draining. The upstream's state is reported (in /readyz's body, in
// tasksbridge_upstream_up, in /healthz?verbose) but does not make the
// bridge unready: every replica shares the one upstream, so an upstream
// outage would take all of them out of rotation together, and clients would
// get connection refused where the bridge answers with what its store holds
// (tasks/get, tasks/list, finished results) and a clear JSON-RPC error for
// what needs the upstream. Stored results and clear errors beat connection
// refused.
//
// One failed store check does not take the bridge out of rotation; it
// becomes not ready after readyFailures consecutive failed checks and ready
// again after the first good one. A verdict is reused for readyCache (a
// failed check for readyRetry), so /readyz polled by many probers costs the
// store and the upstream at most one check per interval.
const (
	readyCache    = 2 * time.Second
	readyRetry    = 500 * time.Millisecond
	readyFailures = 3
)

// Readyz answers 200 when the store answers and the bridge is not draining,
// with the upstream's state in the body (reachable with its era, requires
// authorization, or unreachable and why); else 503 with the reason.
func (s *Server) Readyz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := s.ready(r.Context())
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready: %v\n", err)
			if !s.draining.Load() {
				fmt.Fprintf(w, "upstream: %s\n", s.upstreamState())
			}
			return
		}
		fmt.Fprintf(w, "ready\nupstream: %s\n", s.upstreamState())
	})
}

// upstreamState is the last readiness check's view of the upstream ("not
// checked yet" before the first).
func (s *Server) upstreamState() string {
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	if s.readyNote == "" {
		return "not checked yet"
	}
	return s.readyNote
}

// errDraining is /readyz's answer once Drain was called.
var errDraining = errors.New("draining: this replica is shutting down")

func (s *Server) ready(ctx context.Context) error {
	if s.draining.Load() {
		return errDraining
	}
	s.readyMu.Lock()
	defer s.readyMu.Unlock()
	reuse := s.readyReuse[0]
	if s.readyFails > 0 {
		reuse = s.readyReuse[1]
	}
	if s.readyAt.IsZero() || time.Since(s.readyAt) >= reuse {
		err := s.readyCheck(ctx)
		s.readyAt = time.Now()
		var note readyWith
		if errors.As(err, &note) {
			s.readyNote, err = string(note), nil
		}
		switch {
		case err == nil:
			if s.readyFails >= readyFailures {
				s.log.Info("ready again: the store answers")
			}
			s.readyFails, s.readyErr = 0, nil
		default:
			s.readyFails++
			s.readyErr = err
			if s.readyFails == readyFailures {
				s.log.Warn("not ready: the store does not answer; /readyz answers 503 until it does", "failed_checks", s.readyFails, "err", err)
			}
		}
	}
	if s.readyFails >= readyFailures {
		return fmt.Errorf("%w (%d checks in a row failed)", s.readyErr, s.readyFails)
	}
	return nil
}

// checkReady checks the store (an error: not ready) and then the upstream
// (never an error: its state is the readyWith note, see Readiness above).
// Called with readyMu held; ready's cache bounds how often it runs.
func (s *Server) checkReady(ctx context.Context) error {
	if _, err := s.store.GetSession(ctx, sessionmap.Scope{Session: "readyz-probe"}); err != nil && !errors.Is(err, sessionmap.ErrNotFound) {
		s.readyNote = "not checked (the store check failed first)"
		return fmt.Errorf("store: %w", err)
	}
	return readyWith(s.checkUpstream(ctx))
}

// checkUpstream describes the upstream for /readyz: reachable (with its
// era), requires authorization, or unreachable and why. Its requests go
// through the metered client, so they also set tasksbridge_upstream_up.
func (s *Server) checkUpstream(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, ctxNoEraFeedback, true), 5*time.Second)
	defer cancel()
	got, err := s.upstreamEra(ctx, "")
	switch {
	case err != nil && probeRefused(err):
		// It answered: its clients bring the credentials.
		return "reachable, requires authorization (its era is decided by the first authorized request)"
	case err != nil:
		return fmt.Sprintf("unreachable: %s: era unknown: %v (requests that need it get a JSON-RPC error; stored tasks are still served)", s.target, err)
	}
	if s.url == nil {
		return fmt.Sprintf("a command, started on demand (era %s)", got)
	}
	// Any answer means the upstream is reachable (a legacy server refuses a
	// discover); only a transport failure means unreachable.
	_, err = s.modernUp.Call(ctx, modern.MethodDiscover, nil, modernup.CallOptions{})
	switch {
	case err != nil && modernup.Retryable(err):
		return fmt.Sprintf("unreachable: %s (era %s): %v (requests that need it get a JSON-RPC error; stored tasks are still served)", s.target, got, err)
	case err != nil && probeRefused(err):
		return fmt.Sprintf("reachable, requires authorization (era %s)", got)
	}
	return fmt.Sprintf("reachable (era %s)", got)
}
