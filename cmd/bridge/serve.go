package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/era"
	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	modernface "github.com/tasksbridge/tasksbridge/face/modern"
	"github.com/tasksbridge/tasksbridge/internal/version"
	"github.com/tasksbridge/tasksbridge/ops/audit"
	"github.com/tasksbridge/tasksbridge/ops/oplog"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/runtime/coord"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// Defaults of `bridge serve`.
const (
	serveListen  = "127.0.0.1:8080"
	serveDataDir = "./tasksbridge-data"
)

func init() {
	serve := &cli.Command{
		Name:      "serve",
		Usage:     "serve MCP clients of either era (2025-11-25 legacy, 2026-07-28 modern) in front of a server of either era",
		UsageText: "bridge serve --upstream URL [--listen 127.0.0.1:8080] [--data-dir ./tasksbridge-data] [--upstream-era auto|legacy|modern] [--metrics-listen ADDR]\n   bridge serve --upstream-command \"prog args\" [--stdio] [...]",
		Description: "One endpoint, http://LISTEN/mcp (https:// with --tls-cert), serves whichever era each client speaks in front of whichever era\n" +
			"the upstream speaks. Each request's era is detected: initialize or a known legacy Mcp-Session-Id is\n" +
			"legacy (2025-11-25); per-request _meta protocolVersion, server/discover or MCP-Protocol-Version\n" +
			"2026-07-28 is modern (an unsupported version gets -32022 with the supported list). The upstream's era\n" +
			"is probed once with server/discover, falling back to initialize (legacy), cached and re-probed when\n" +
			"it stops holding; --upstream-era pins it. The four combinations:\n\n" +
			"   legacy client -> modern upstream   translated: the legacy face emulates the experimental tasks of\n" +
			"                                      2025-11-25 (tasks/get, the blocking tasks/result, tasks/list,\n" +
			"                                      tasks/cancel) over the io.modelcontextprotocol/tasks extension\n" +
			"   modern client -> legacy upstream   translated: the modern face offers the tasks extension over\n" +
			"                                      the upstream's legacy tasks\n" +
			"   legacy client -> legacy upstream   passed through unchanged (sessions, SSE streams), metered\n" +
			"   modern client -> modern upstream   passed through unchanged, metered\n\n" +
			"Pass-through needs an HTTP upstream (--upstream URL); with --upstream-command only the two translated\n" +
			"combinations are served. /healthz answers while the process is up (?verbose: with the upstream's state),\n" +
			"/readyz while this replica can serve: the data directory (or Redis) answers and it is not draining; an\n" +
			"unreachable upstream is reported in its body and in tasksbridge_upstream_up, not as unreadiness (stored\n" +
			"results and clear errors beat connection refused). /metrics has the Prometheus rollout metrics\n" +
			"(docs/METRICS.md) unless --metrics-listen moves them to a listener of their own. With --stdio one client is served on\n" +
			"stdin/stdout instead (logs go to stderr).\n\n" +
			"Sessions and tasks are kept in --data-dir: after a restart (even kill -9) legacy clients continue with\n" +
			"their Mcp-Session-Id and task ids. With --store redis://HOST:PORT/DB they are kept in Redis instead,\n" +
			"shared by every bridge started with the same --store and --redis-prefix; those bridges also share\n" +
			"each task's upstream reads (one bridge at a time holds a task's lease in Redis and reads it upstream,\n" +
			"the others relay what it publishes). Tasks belong to the client's Authorization header (hashed) when\n" +
			"it sends one, otherwise to its session.\n\n" +
			"SIGINT or SIGTERM stops gracefully: /readyz answers 503 at once and, for --shutdown-delay, the listener\n" +
			"stays open and new requests get HTTP 503 with Retry-After and a JSON-RPC error while requests in flight\n" +
			"and blocked waits go on; then blocked waits are handed back (clients call tasks/result again), requests\n" +
			"in flight finish within --shutdown-timeout, the store is closed and one \"stopped\" line is logged. A\n" +
			"second SIGINT or SIGTERM stops at once. SIGHUP re-reads the --config file: the log level, the limits\n" +
			"and the Host, Origin and trusted-proxy lists change at once, TLS certificates are read again; it never\n" +
			"stops the bridge.\n\n" +
			"Every flag can also be set from the environment variable shown with it, or as a key of the --config\n" +
			"file (bridge config reference lists them).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "upstream", Usage: "the upstream server's Streamable HTTP endpoint URL", EnvVars: []string{"TASKSBRIDGE_UPSTREAM"}},
			&cli.StringFlag{Name: "upstream-command", Usage: "run a stdio upstream server instead: \"prog args\" (quotes group words)", EnvVars: []string{"TASKSBRIDGE_UPSTREAM_COMMAND"}},
			&cli.StringFlag{Name: "upstream-era", Value: "auto", Usage: "the upstream's era: auto (probe server/discover, fall back to initialize), legacy or modern (pinned, no probe)", EnvVars: []string{"TASKSBRIDGE_UPSTREAM_ERA"}},
			&cli.DurationFlag{Name: "upstream-timeout", Value: modernup.DefaultTimeout, Usage: "longest an upstream of either era may stay silent on one request (each progress notification restarts it; a task's own wait is bounded by its ttl instead); then the client gets a retryable error naming the upstream's slowness (0 or less: no bound)", EnvVars: []string{"TASKSBRIDGE_UPSTREAM_TIMEOUT"}},
			&cli.StringFlag{Name: "listen", Value: serveListen, Usage: "address of the MCP endpoint (`HOST:PORT`)", EnvVars: []string{"TASKSBRIDGE_LISTEN"}},
			&cli.StringFlag{Name: "metrics-listen", Usage: "serve /metrics on this address instead of the main listener (`HOST:PORT`; plain http, also with --tls-cert: keep it on a private interface)", EnvVars: []string{"TASKSBRIDGE_METRICS_LISTEN"}},
			&cli.StringFlag{Name: "data-dir", Value: serveDataDir, Usage: "directory of the durable session and task index", EnvVars: []string{"TASKSBRIDGE_DATA_DIR"}},
			&cli.BoolFlag{Name: "stdio", Usage: "serve one client on stdin/stdout instead of HTTP", EnvVars: []string{"TASKSBRIDGE_STDIO"}},
			&cli.StringSliceFlag{Name: "allowed-origin", Usage: "a browser Origin accepted besides loopback ones (`SCHEME://HOST[:PORT]`; repeatable or comma-separated; no \"*\"): other Origins get 403 on every path (M-43)", EnvVars: []string{"TASKSBRIDGE_ALLOWED_ORIGINS"}},
			&cli.Int64Flag{Name: "max-body-bytes", Value: legacyface.DefaultMaxBodyBytes, Usage: "largest request body; larger ones get 413", EnvVars: []string{"TASKSBRIDGE_MAX_BODY_BYTES"}},
			&cli.DurationFlag{Name: "keepalive", Value: legacyface.DefaultKeepAlive, Usage: "interval of SSE keep-alive comments on long waits (0 or less: none)", EnvVars: []string{"TASKSBRIDGE_KEEPALIVE"}},
			&cli.DurationFlag{Name: "session-idle-timeout", Value: legacyface.DefaultSessionIdleTimeout, Usage: "how long an idle legacy session lives: after it the session answers 404 and is released", EnvVars: []string{"TASKSBRIDGE_SESSION_IDLE_TIMEOUT"}},
			&cli.IntFlag{Name: "max-sessions", Value: legacyface.DefaultMaxSessionsPerCPU * runtime.NumCPU(), Usage: "most legacy sessions this process holds (well under 1 KiB each while idle); a new one beyond it gets HTTP 503 (-1: no bound)", DefaultText: fmt.Sprintf("%d per CPU, %d here", legacyface.DefaultMaxSessionsPerCPU, legacyface.DefaultMaxSessionsPerCPU*runtime.NumCPU()), EnvVars: []string{"TASKSBRIDGE_MAX_SESSIONS"}},
			&cli.IntFlag{Name: "max-sessions-per-principal", Usage: "most legacy sessions one client holds: its credentials, or without them its address (the one a --trusted-proxy forwarded; IPv6 by /64); a new one beyond it gets HTTP 429. When --max-sessions is reached, the least recently used idle session without credentials of a bigger holder makes room (it answers 404 afterwards) (-1: no bound)", DefaultText: fmt.Sprintf("a tenth of --max-sessions, at least %d", legacyface.DefaultSessionShareFloor), EnvVars: []string{"TASKSBRIDGE_MAX_SESSIONS_PER_PRINCIPAL"}},
			&cli.IntFlag{Name: "session-cache", Value: legacyface.DefaultMaxIdleCached, Usage: "idle legacy sessions kept whole in memory; older idle ones go dormant (about 40 bytes each) and are loaded back from the store on their next request (-1: keep every idle session whole)", EnvVars: []string{"TASKSBRIDGE_SESSION_CACHE"}},
			&cli.IntFlag{Name: "max-tasks-per-principal", Value: legacyface.DefaultMaxTasksPerPrincipal, Usage: "most tools/call requests one legacy client (its Authorization, else its session) has in flight (-1: no bound)", EnvVars: []string{"TASKSBRIDGE_MAX_TASKS_PER_PRINCIPAL"}},
			&cli.IntFlag{Name: "max-waiters-per-principal", Value: legacyface.DefaultMaxWaitersPerPrincipal, Usage: "most blocked waits on tasks (tasks/result, plain tools/call on a task) one legacy client has open (-1: no bound)", EnvVars: []string{"TASKSBRIDGE_MAX_WAITERS_PER_PRINCIPAL"}},
			&cli.BoolFlag{Name: "status-notifications", Usage: "send notifications/tasks/status when a legacy client's task changes (stdio, or an open GET stream)", EnvVars: []string{"TASKSBRIDGE_STATUS_NOTIFICATIONS"}},
			&cli.BoolFlag{Name: "require-auth", Usage: "in front of a legacy server, refuse 2026-07-28 requests without a principal (an Authorization header, or what --principal takes; HTTP 401); without it, unauthenticated modern clients share one scope in which the unguessable task ids act as bearer tokens", EnvVars: []string{"TASKSBRIDGE_REQUIRE_AUTH"}},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error", EnvVars: []string{"TASKSBRIDGE_LOG_LEVEL"}},
			&cli.StringFlag{Name: "log-format", Value: oplog.FormatText, Usage: "text or json (one JSON object per line)", EnvVars: []string{"TASKSBRIDGE_LOG_FORMAT"}},
			&cli.BoolFlag{Name: "log-libraries", Usage: "also log the internals of the MCP SDK and the Badger store below error level (for debugging them; the store engine's warnings are always logged)", EnvVars: []string{"TASKSBRIDGE_LOG_LIBRARIES"}},
			&cli.StringFlag{Name: "audit-log", Usage: "append an audit record (one JSON line: time, action, principal hash, session, task, outcome; never a credential) for each task creation, cancel, input answer, result delivery and task end to this file (`PATH`, created 0600)", EnvVars: []string{"TASKSBRIDGE_AUDIT_LOG"}},
			&cli.DurationFlag{Name: "shutdown-timeout", Value: defaultShutdownTimeout, Usage: "after the shutdown delay, how long blocked waits and requests in flight have to finish before they are cut", EnvVars: []string{"TASKSBRIDGE_SHUTDOWN_TIMEOUT"}},
		}, append(append(append(append(edgeFlags(), storeFlags(true)...), credentialKeyFlag), lifecycleFlags()...), tlsFlags()...)...),
		Action: runServe,
	}
	register(serve)
	registerConfig(serve) // --config, and `bridge config` with serve's flags
	startDemoBridge = func(c *cli.Context, upstreamURL, listen, dataDir string) (string, func() error, error) {
		cleanup := func() error { return nil }
		if dataDir == "" {
			dir, err := os.MkdirTemp("", "tasksbridge-demo-")
			if err != nil {
				return "", nil, fmt.Errorf("demo: data dir: %w", err)
			}
			dataDir = dir
			cleanup = func() error { return os.RemoveAll(dir) }
		}
		s, err := router.New(router.Config{Upstream: upstreamURL, DataDir: dataDir, Logger: newLogger(c.App.ErrWriter, "warn"), StatusNotifications: true})
		if err != nil {
			_ = cleanup()
			return "", nil, err
		}
		hs, err := serveHTTP(s, listen, "", listenOptions{ReadTimeout: defaultReadTimeout, IdleTimeout: defaultIdleTimeout, ShutdownTimeout: 5 * time.Second})
		if err != nil {
			_ = s.Close()
			_ = cleanup()
			return "", nil, err
		}
		return hs.url, func() error {
			return errors.Join(hs.stop(), cleanup())
		}, nil
	}
}

// newLogger is the bridge's logger on w: text at level, library internals
// kept out (oplog.NewHandler).
func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	h, _ := oplog.NewHandler(w, oplog.FormatText, l, false)
	return slog.New(h)
}

func runServe(c *cli.Context) error {
	hup, stopHUP := catchSIGHUP() // from the start: SIGHUP must never end the process (reload.go)
	defer stopHUP()
	up, cmd := c.String("upstream"), c.String("upstream-command")
	switch {
	case up == "" && cmd == "":
		return errors.New("serve: no upstream: set --upstream URL (or TASKSBRIDGE_UPSTREAM) or --upstream-command \"prog args\"")
	case up != "" && cmd != "":
		return errors.New("serve: set only one of --upstream and --upstream-command")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return fmt.Errorf("serve: --log-level %q: want debug, info, warn or error", c.String("log-level"))
	}
	if _, err := era.ParseMode(c.String("upstream-era")); err != nil {
		return fmt.Errorf("serve: --upstream-era: %w", err)
	}
	levelVar := new(slog.LevelVar) // SIGHUP may change it (reload.go)
	levelVar.Set(level)
	h, err := oplog.NewHandler(c.App.ErrWriter, c.String("log-format"), levelVar, c.Bool("log-libraries"))
	if err != nil {
		return fmt.Errorf("serve: --log-format %q: want text or json", c.String("log-format"))
	}
	logger := slog.New(h)
	cfg := router.Config{
		Upstream:            up,
		UpstreamCommand:     cmd,
		UpstreamEra:         c.String("upstream-era"),
		UpstreamTimeout:     c.Duration("upstream-timeout"),
		DataDir:             c.String("data-dir"),
		Logger:              logger,
		AllowedOrigins:      c.StringSlice("allowed-origin"),
		MaxBodyBytes:        c.Int64("max-body-bytes"),
		KeepAlive:           c.Duration("keepalive"),
		SessionIdleTimeout:  c.Duration("session-idle-timeout"),
		StatusNotifications: c.Bool("status-notifications"),
		AllowedHosts:        c.StringSlice("allowed-host"),
		TrustedProxies:      c.StringSlice("trusted-proxy"),
		PublicURL:           c.String("public-url"),
		NoForwardedHeaders:  c.Bool("no-forwarded-headers"),
	}
	tl, err := readTLSFlags(c, logger, &cfg)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer tl.Close()
	ps, err := readPrincipalFlags(c)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	ps.Logger = logger
	if cfg.Resolver, err = newResolver(c.Context, ps); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	cfg.IdentityHeader = ps.Header
	cfg.OAuthAuthServerProxy = c.Bool("oauth-proxy-auth-server")
	maxSessions, maxTasks, maxWaiters := c.Int("max-sessions"), c.Int("max-tasks-per-principal"), c.Int("max-waiters-per-principal")
	for name, v := range map[string]int{"max-tasks-per-principal": maxTasks, "max-waiters-per-principal": maxWaiters} {
		if v == 0 {
			return fmt.Errorf("serve: --%s 0 would refuse every request; use -1 for no bound", name)
		}
	}
	sessionCache := c.Int("session-cache")
	if sessionCache == 0 {
		return fmt.Errorf("serve: --session-cache 0 would reload every session from the store on every request; use 1 or more, or -1 to keep every idle session whole")
	}
	cfg.Legacy = func(lc *legacyface.Config) {
		lc.MaxSessions, lc.MaxTasksPerPrincipal, lc.MaxWaitersPerPrincipal = maxSessions, maxTasks, maxWaiters
		lc.MaxSessionsPerPrincipal = c.Int("max-sessions-per-principal")
		lc.MaxIdleCached = sessionCache
	}
	if c.Bool("require-auth") {
		// M-65: every task request authenticated; modern has no sessions to
		// fall back on, so the operator chooses between this and bearer ids.
		cfg.Modern = func(o *modernface.Options) { o.RequireAuth = true }
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = -1
	}
	if cfg.UpstreamTimeout <= 0 {
		cfg.UpstreamTimeout = -1 // no bound (zero would select the default)
	}
	if path := c.String("audit-log"); path != "" {
		al, err := audit.Open(path)
		if err != nil {
			return fmt.Errorf("serve: --audit-log: %w", err)
		}
		defer func() {
			if err := al.Err(); err != nil {
				logger.Error("the audit log could not be written completely", "path", path, "err", err)
			}
			_ = al.Close()
		}()
		// L-79, L-80 for clients of either era (after, not instead of, the
		// limits set above).
		legacyTweak := cfg.Legacy
		cfg.Legacy = func(lc *legacyface.Config) {
			legacyTweak(lc)
			lc.Audit = al
		}
		modernTweak := cfg.Modern
		cfg.Modern = func(o *modernface.Options) {
			if modernTweak != nil {
				modernTweak(o)
			}
			o.Audit = al
		}
	}
	rs, err := openRedisStore(c, sessionmap.WithLogger(logger))
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if rs != nil {
		defer rs.Close() // after the server: it does not close a store it was given
		cfg.Store, cfg.DataDir = rs, ""
		// One upstream watcher per task across the replicas on this Redis.
		co := coord.NewRedis(rs.Client(), rs.Prefix(), logger).WithDurability(rs.Durability())
		defer co.Close()
		cfg.Coord = co
	} else if cfg.DataDir == "" {
		return errors.New("serve: --data-dir must not be empty")
	} else if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("serve: data dir: %w", err)
	}
	if cfg.CredentialKey, err = credentialKey(c); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	s, err := router.New(cfg)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	reloads := newReloader(c, hup, levelVar, logger, s.Reconfigure)
	defer reloads.start()()
	lo, err := listenOptionsOf(c)
	if err != nil {
		_ = s.Close()
		return fmt.Errorf("serve: %w", err)
	}
	// SIGINT, SIGTERM: lifecycle.go (a second one stops at once).
	ss := watchStopSignals(c.Context, logger)
	defer ss.stop()
	ctx, timeout := ss.ctx, lo.ShutdownTimeout
	metricsListen := c.String("metrics-listen")

	if c.Bool("stdio") {
		// stdout carries MCP only; messages go to stderr.
		var ms *metricsServer
		if metricsListen != "" {
			if ms, err = serveMetrics(s, metricsListen); err != nil {
				_ = s.Close()
				return fmt.Errorf("serve: %w", err)
			}
			fmt.Fprintf(c.App.ErrWriter, "metrics: %s\n", ms.url)
		}
		logger.Info("serving one client on stdin/stdout", "upstream", upstreamName(up, cmd))
		err := s.ServeStdio(ctx, c.App.Reader, c.App.Writer)
		stopStart := time.Now()
		sctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_ = s.Shutdown(sctx)
		if ms != nil {
			_ = ms.srv.Shutdown(sctx)
		}
		if cerr := s.Close(); cerr != nil && err == nil {
			err = cerr
		}
		logger.Info("stopped", "took", time.Since(stopStart).Round(time.Millisecond).String(), "waits_handed_back", s.HandedBack())
		if err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("serve: %w", err)
		}
		return nil
	}

	lo.TLS = tl
	hs, err := serveHTTP(s, c.String("listen"), metricsListen, lo)
	if err != nil {
		_ = s.Close()
		return fmt.Errorf("serve: %w", err)
	}
	reloads.addHook(hs.ReloadTLS) // SIGHUP reads the listener's certificate files again (tls.go)
	fmt.Fprintf(c.App.Writer, "bridge: %s\n", hs.url)
	if hs.metrics != nil {
		fmt.Fprintf(c.App.Writer, "metrics: %s\n", hs.metrics.url)
	}
	logger.Info("serving MCP clients", "version", version.Info().Version, "revision", version.Info().Revision, "endpoint", hs.url, "upstream", upstreamName(up, cmd), "upstream_era", cfg.UpstreamEra, "store", storeName(c))
	return awaitStop(ss, hs, logger, c.Duration("shutdown-delay"))
}

func upstreamName(url, cmd string) string {
	if url != "" {
		return url
	}
	return "command " + strings.Fields(cmd + " ?")[0]
}

// metricsServer is the --metrics-listen listener.
type metricsServer struct {
	srv    *http.Server
	url    string
	served chan error
}

func serveMetrics(s *router.Server, listen string) (*metricsServer, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("metrics listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", s.MetricsHandler())
	ms := &metricsServer{srv: &http.Server{Handler: mux, ReadHeaderTimeout: headerTimeout, IdleTimeout: defaultIdleTimeout}, url: "http://" + ln.Addr().String() + "/metrics", served: make(chan error, 1)}
	go func() { ms.served <- ms.srv.Serve(ln) }()
	return ms, nil
}

// httpServing is a running bridge listener.
type httpServing struct {
	url     string
	metrics *metricsServer // nil: /metrics is on the main listener
	timeout time.Duration  // --shutdown-timeout
	// drain stops gracefully (lifecycle.go gracefulStop): new requests get
	// 503 for delay, then waits are handed back and requests in flight
	// finish; hurry cuts both short.
	drain func(delay time.Duration, hurry <-chan struct{}) (stopReport, error)
	conns *connTracker
	// tls is the listener's certificate (nil: plain http); SIGHUP calls
	// ReloadTLS (tls.go).
	tls *listenerTLS
}

// stop is drain without a shutdown delay.
func (hs *httpServing) stop() error {
	_, err := hs.drain(0, nil)
	return err
}

// serveHTTP serves s on listen (and /metrics on metricsListen when set),
// with the listener's timeouts of o (lifecycle.go newHTTPServer), and
// returns the /mcp URL and the graceful stop.
func serveHTTP(s *router.Server, listen, metricsListen string, o listenOptions) (*httpServing, error) {
	var ms *metricsServer
	if metricsListen != "" {
		var err error
		if ms, err = serveMetrics(s, metricsListen); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		if ms != nil {
			_ = ms.srv.Close()
		}
		return nil, fmt.Errorf("listen: %w", err)
	}
	srv, ct := newHTTPServer(s.Mux(ms == nil), o)
	served := make(chan error, 1)
	scheme := o.TLS.configure(srv)
	go func() { served <- serveOn(srv, ln) }()
	drain := func(delay time.Duration, hurry <-chan struct{}) (stopReport, error) {
		return gracefulStop(s, srv, served, ct, ms, delay, o.ShutdownTimeout, hurry)
	}
	return &httpServing{url: scheme + "://" + ln.Addr().String() + "/mcp", metrics: ms, timeout: o.ShutdownTimeout, drain: drain, conns: ct, tls: o.TLS}, nil
}
