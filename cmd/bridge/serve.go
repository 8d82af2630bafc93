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
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/legacy/face"
)

// Defaults of `bridge serve`.
const (
	serveListen  = "127.0.0.1:8080"
	serveDataDir = "./tasksbridge-data"
)

func init() {
	register(&cli.Command{
		Name:      "serve",
		Usage:     "serve legacy (2025-11-25) MCP clients in front of a modern (2026-07-28 + tasks extension) server",
		UsageText: "bridge serve --upstream URL [--listen 127.0.0.1:8080] [--data-dir ./tasksbridge-data]\n   bridge serve --upstream-command \"prog args\" [--stdio] [...]",
		Description: "Legacy clients, including ones that use the experimental tasks of 2025-11-25 (tasks/get, the\n" +
			"blocking tasks/result, tasks/list, tasks/cancel), keep working against an upgraded server.\n\n" +
			"The legacy Streamable HTTP endpoint is http://LISTEN/mcp; /healthz answers while the process is up\n" +
			"and /readyz when the data directory is open and the upstream answers server/discover. With --stdio\n" +
			"one legacy client is served on stdin/stdout instead (logs go to stderr).\n\n" +
			"Sessions and tasks are kept in --data-dir: after a restart (even kill -9) clients continue with\n" +
			"their Mcp-Session-Id and task ids. Tasks belong to the client's Authorization header (hashed) when\n" +
			"it sends one, otherwise to its session. SIGINT or SIGTERM stops gracefully: no new requests, blocked\n" +
			"waits are handed back (clients call tasks/result again), the data directory is closed.\n\n" +
			"Every flag can also be set from the environment variable shown with it.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "upstream", Usage: "the modern server's Streamable HTTP endpoint URL", EnvVars: []string{"TASKSBRIDGE_UPSTREAM"}},
			&cli.StringFlag{Name: "upstream-command", Usage: "run a stdio modern server instead: \"prog args\" (quotes group words)", EnvVars: []string{"TASKSBRIDGE_UPSTREAM_COMMAND"}},
			&cli.StringFlag{Name: "listen", Value: serveListen, Usage: "address of the legacy endpoint (`HOST:PORT`)", EnvVars: []string{"TASKSBRIDGE_LISTEN"}},
			&cli.StringFlag{Name: "data-dir", Value: serveDataDir, Usage: "directory of the durable session and task index", EnvVars: []string{"TASKSBRIDGE_DATA_DIR"}},
			&cli.BoolFlag{Name: "stdio", Usage: "serve one legacy client on stdin/stdout instead of HTTP", EnvVars: []string{"TASKSBRIDGE_STDIO"}},
			&cli.StringSliceFlag{Name: "allowed-origin", Usage: "an Origin accepted besides loopback ones and the request's own host (repeatable)", EnvVars: []string{"TASKSBRIDGE_ALLOWED_ORIGINS"}},
			&cli.Int64Flag{Name: "max-body-bytes", Value: face.DefaultMaxBodyBytes, Usage: "largest request body; larger ones get 413", EnvVars: []string{"TASKSBRIDGE_MAX_BODY_BYTES"}},
			&cli.DurationFlag{Name: "keepalive", Value: face.DefaultKeepAlive, Usage: "interval of SSE keep-alive comments on long waits (0 or less: none)", EnvVars: []string{"TASKSBRIDGE_KEEPALIVE"}},
			&cli.DurationFlag{Name: "session-idle-timeout", Value: face.DefaultSessionIdleTimeout, Usage: "how long an idle session can still be resumed", EnvVars: []string{"TASKSBRIDGE_SESSION_IDLE_TIMEOUT"}},
			&cli.BoolFlag{Name: "status-notifications", Usage: "send notifications/tasks/status when a client's task changes (stdio, or an open GET stream)", EnvVars: []string{"TASKSBRIDGE_STATUS_NOTIFICATIONS"}},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "debug, info, warn or error", EnvVars: []string{"TASKSBRIDGE_LOG_LEVEL"}},
			&cli.DurationFlag{Name: "shutdown-timeout", Value: 10 * time.Second, Usage: "how long a graceful stop may take", EnvVars: []string{"TASKSBRIDGE_SHUTDOWN_TIMEOUT"}},
		},
		Action: runServe,
	})
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
		b, err := face.New(face.Config{Upstream: upstreamURL, DataDir: dataDir, Logger: newLogger(c.App.ErrWriter, "warn"), StatusNotifications: true})
		if err != nil {
			_ = cleanup()
			return "", nil, err
		}
		url, stop, err := serveHTTP(b, listen, 5*time.Second)
		if err != nil {
			_ = b.Close()
			_ = cleanup()
			return "", nil, err
		}
		return url, func() error {
			return errors.Join(stop(), cleanup())
		}, nil
	}
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

func runServe(c *cli.Context) error {
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
	logger := newLogger(c.App.ErrWriter, c.String("log-level"))
	cfg := face.Config{
		Upstream:            up,
		UpstreamCommand:     cmd,
		DataDir:             c.String("data-dir"),
		Logger:              logger,
		AllowedOrigins:      c.StringSlice("allowed-origin"),
		MaxBodyBytes:        c.Int64("max-body-bytes"),
		KeepAlive:           c.Duration("keepalive"),
		SessionIdleTimeout:  c.Duration("session-idle-timeout"),
		StatusNotifications: c.Bool("status-notifications"),
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = -1
	}
	if cfg.DataDir == "" {
		return errors.New("serve: --data-dir must not be empty")
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("serve: data dir: %w", err)
	}
	b, err := face.New(cfg)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	ctx, stopSignals := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	timeout := c.Duration("shutdown-timeout")

	if c.Bool("stdio") {
		// stdout carries MCP only; messages go to stderr.
		logger.Info("serving one legacy client on stdin/stdout", "upstream", upstreamName(up, cmd))
		err := b.ServeStdio(ctx, c.App.Reader, c.App.Writer)
		sctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_ = b.Shutdown(sctx)
		if cerr := b.Close(); cerr != nil && err == nil {
			err = cerr
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("serve: %w", err)
		}
		return nil
	}

	url, stop, err := serveHTTP(b, c.String("listen"), timeout)
	if err != nil {
		_ = b.Close()
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintf(c.App.Writer, "bridge: %s\n", url)
	logger.Info("serving legacy MCP clients", "endpoint", url, "upstream", upstreamName(up, cmd), "data_dir", cfg.DataDir)
	<-ctx.Done()
	logger.Info("stopping")
	if err := stop(); err != nil {
		return fmt.Errorf("serve: stop: %w", err)
	}
	return nil
}

func upstreamName(url, cmd string) string {
	if url != "" {
		return url
	}
	return "command " + strings.Fields(cmd + " ?")[0]
}

// serveHTTP serves b.Mux() on listen and returns the /mcp URL and a function
// that stops gracefully: the bridge hands back blocked waits and closes its
// sessions, the HTTP server stops accepting and finishes what is in flight,
// then the bridge closes its store.
func serveHTTP(b *face.Bridge, listen string, timeout time.Duration) (string, func() error, error) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return "", nil, fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: b.Mux(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	stop := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		var errs []error
		if err := b.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("http: %w", err))
			_ = srv.Close()
		}
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, fmt.Errorf("http: %w", err))
		}
		if err := b.Close(); err != nil {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	}
	return "http://" + ln.Addr().String() + "/mcp", stop, nil
}
