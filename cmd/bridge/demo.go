package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/internal/demo"
)

// Default listen addresses of `bridge demo`: the bridge's, and the embedded
// upstream's when it runs alone.
const (
	demoBridgeListen   = "127.0.0.1:8080"
	demoUpstreamListen = "127.0.0.1:8081"
)

// startDemoBridge starts the bridge in front of the embedded upstream for
// the full `bridge demo`. The legacy-face work sets it (from its own file's
// init); until then `bridge demo` without --upstream-only refuses to run.
// It returns the bridge's endpoint URL and a function that stops it.
var startDemoBridge func(c *cli.Context, upstreamURL, listen, dataDir string) (bridgeURL string, stop func() error, err error)

func init() {
	register(&cli.Command{
		Name:  "demo",
		Usage: "run an embedded modern (2026-07-28 + tasks extension) server, and the bridge in front of it",
		Description: "The embedded server's tools: echo {text}; slow_task {ms, text}; fail_task {reason};\n" +
			"error_task {reason}; elicit_task {question}; sample_task {prompt}. All but echo return tasks.\n" +
			"--upstream-only runs just the embedded server and prints \"upstream: URL\".",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Usage: "address to listen on (loopback by default; " +
				demoBridgeListen + " for the bridge, " + demoUpstreamListen + " with --upstream-only)",
				EnvVars: []string{"TASKSBRIDGE_DEMO_LISTEN"}},
			&cli.StringFlag{Name: "data-dir", Usage: "bridge data directory (default: a temporary one)",
				EnvVars: []string{"TASKSBRIDGE_DATA_DIR"}},
			&cli.BoolFlag{Name: "upstream-only", Usage: "run only the embedded modern server"},
			&cli.DurationFlag{Name: "poll-interval", Value: time.Second, Usage: "pollIntervalMs advertised for tasks"},
			&cli.BoolFlag{Name: "no-push", Usage: "do not offer subscriptions/listen task notifications (clients must poll)"},
			&cli.BoolFlag{Name: "dual-era", Usage: "also accept legacy initialize (by default the server is modern-only)"},
			&cli.BoolFlag{Name: "stdio", Hidden: true, Usage: "with --upstream-only: serve one client on stdin/stdout"},
		},
		Action: runDemo,
	})
}

func runDemo(c *cli.Context) error {
	ctx, stopSignals := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stopSignals()

	srv := demo.New(demo.Options{
		PollInterval: c.Duration("poll-interval"),
		DisablePush:  c.Bool("no-push"),
		DualEra:      c.Bool("dual-era"),
	})
	defer srv.Close()

	if !c.Bool("upstream-only") {
		if startDemoBridge == nil {
			// A plain error: main prints it and exits 1 (cli.Exit would call
			// os.Exit inside RunContext, which in-process tests cannot survive).
			return errors.New("demo: the bridge part is not available yet; run `bridge demo --upstream-only` for the embedded modern server alone")
		}
	} else if c.Bool("stdio") {
		// stdout carries MCP only (M-14); messages go to stderr.
		fmt.Fprintln(c.App.ErrWriter, "upstream: serving one client on stdin/stdout")
		err := srv.ServeIO(ctx, io.NopCloser(c.App.Reader), nopWriteCloser{c.App.Writer})
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			return fmt.Errorf("demo: stdio: %w", err)
		}
		return nil
	}

	stopBridge := func() error { return nil }
	upListen := demoUpstreamListen
	if c.Bool("upstream-only") && c.IsSet("listen") {
		upListen = c.String("listen")
	} else if !c.Bool("upstream-only") {
		upListen = "127.0.0.1:0" // any loopback port; the bridge is what users talk to
	}
	upURL, stopUp, err := srv.Start(ctx, upListen)
	if err != nil {
		return err
	}
	defer stopUp()
	fmt.Fprintf(c.App.Writer, "upstream: %s\n", upURL)

	if c.Bool("upstream-only") {
		fmt.Fprintf(c.App.Writer, "try: curl -sN %s -H 'Content-Type: application/json' "+
			"-H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: %s' -H 'Mcp-Method: server/discover' "+
			"-d '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{\"_meta\":"+
			"{\"io.modelcontextprotocol/protocolVersion\":\"%s\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}'\n",
			upURL, demo.ProtocolVersion, demo.ProtocolVersion)
	} else {
		listen := c.String("listen")
		if listen == "" {
			listen = demoBridgeListen
		}
		bridgeURL, stop, err := startDemoBridge(c, upURL, listen, c.String("data-dir"))
		if err != nil {
			return fmt.Errorf("demo: starting the bridge: %w", err)
		}
		stopBridge = sync.OnceValue(stop) // stopped early below, and deferred for the error paths
		defer stopBridge()
		fmt.Fprintf(c.App.Writer, "bridge: %s\n", bridgeURL)
		fmt.Fprintf(c.App.Writer, "try: npx @modelcontextprotocol/inspector --transport http --server-url %s\n", bridgeURL)
	}

	<-ctx.Done()
	// The bridge first: it is the upstream's client, and the notification
	// streams it holds open (one per upstream session) would keep the
	// upstream's graceful shutdown waiting until its deadline.
	_ = stopBridge()
	if err := stopUp(); err != nil {
		return fmt.Errorf("demo: stopping the upstream: %w", err)
	}
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
