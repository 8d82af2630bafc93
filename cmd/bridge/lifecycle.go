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
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/router"
)

// Defaults of the listener's timeouts and of the graceful stop.
const (
	defaultReadTimeout     = 30 * time.Second
	defaultIdleTimeout     = 60 * time.Second
	defaultShutdownDelay   = 5 * time.Second
	defaultShutdownTimeout = 10 * time.Second
	// headerTimeout bounds reading a request's headers.
	headerTimeout = 10 * time.Second
)

// lifecycleFlags are the flags of `bridge serve` for the listener's
// timeouts and the graceful stop (--shutdown-timeout is declared with the
// other serve flags).
func lifecycleFlags() []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "shutdown-delay", Value: defaultShutdownDelay, Usage: "on SIGTERM or SIGINT, how long /readyz answers 503 while the listener stays open and new requests get HTTP 503 with Retry-After (so a load balancer sees the replica leave before its connections are refused); requests in flight and blocked waits go on meanwhile; 0: none", EnvVars: []string{"TASKSBRIDGE_SHUTDOWN_DELAY"}},
		&cli.DurationFlag{Name: "read-timeout", Value: defaultReadTimeout, Usage: "how long a client may take to send a request body once its headers arrived; a slower one is cut and its connection closed (0: no bound). Responses, blocked waits and SSE streams are not bounded by it", EnvVars: []string{"TASKSBRIDGE_READ_TIMEOUT"}},
		&cli.DurationFlag{Name: "idle-timeout", Value: defaultIdleTimeout, Usage: "how long an idle keep-alive connection stays open between requests (0: no bound)", EnvVars: []string{"TASKSBRIDGE_IDLE_TIMEOUT"}},
	}
}

// listenOptions configure serveHTTP's listener and its graceful stop.
type listenOptions struct {
	// ReadTimeout bounds reading a request body after its headers (0: none).
	ReadTimeout time.Duration
	// IdleTimeout bounds an idle keep-alive connection (0: none).
	IdleTimeout time.Duration
	// ShutdownTimeout bounds the drain after the shutdown delay.
	ShutdownTimeout time.Duration
	// TLS serves https with the listener's certificate (nil: plain http;
	// tls.go).
	TLS *listenerTLS
}

func listenOptionsOf(c *cli.Context) (listenOptions, error) {
	o := listenOptions{ReadTimeout: c.Duration("read-timeout"), IdleTimeout: c.Duration("idle-timeout"), ShutdownTimeout: c.Duration("shutdown-timeout")}
	for name, d := range map[string]time.Duration{"read-timeout": o.ReadTimeout, "idle-timeout": o.IdleTimeout, "shutdown-delay": c.Duration("shutdown-delay")} {
		if d < 0 {
			return o, fmt.Errorf("--%s %v: want 0 (no bound) or more", name, d)
		}
	}
	if o.ShutdownTimeout <= 0 {
		return o, fmt.Errorf("--shutdown-timeout %v: want more than 0", o.ShutdownTimeout)
	}
	return o, nil
}

// newHTTPServer is the bridge's http.Server: headers within headerTimeout,
// a body within o.ReadTimeout after them (withBodyDeadline), idle
// connections closed after o.IdleTimeout, and no WriteTimeout or
// ReadTimeout, which would cut blocked tasks/result waits and SSE streams
// (net/http's ReadTimeout stays armed while the handler runs and ends the
// request's context when it passes).
func newHTTPServer(h http.Handler, o listenOptions) (*http.Server, *connTracker) {
	ct := &connTracker{conns: map[net.Conn]http.ConnState{}}
	return &http.Server{
		Handler:           withBodyDeadline(h, o.ReadTimeout),
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       o.IdleTimeout,
		ConnState:         ct.track,
	}, ct
}

// withBodyDeadline gives each request with a body d to send it: the
// connection's read deadline is set when the handler starts and cleared as
// soon as the body was read to its end, so a client that drips its body is
// cut at the deadline and its connection (and file descriptor) released,
// while the response, however long it streams, is not bounded.
//
// A body the handler did not read (a refusal before it) is discarded here,
// under the deadline: net/http would discard it after clearing the
// deadline, without a bound. A body that could not be read in time aborts
// the connection (http.ErrAbortHandler: closed at once, nothing logged).
func withBodyDeadline(h http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(d)) != nil {
			h.ServeHTTP(w, r)
			return
		}
		db := &deadlineBody{ReadCloser: r.Body, clear: func() { _ = rc.SetReadDeadline(time.Time{}) }}
		r.Body = db
		h.ServeHTTP(w, r)
		if db.cut() {
			panic(http.ErrAbortHandler)
		}
	})
}

// deadlineBody clears the read deadline once the body is read through: the
// connection's background read (which notices a client leaving) must not
// hit it during a long response.
type deadlineBody struct {
	io.ReadCloser
	clear func()

	mu     sync.Mutex
	done   bool // read to its end, or a read failed
	failed bool // a read failed: the deadline passed or the client left
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.mu.Lock()
		if !b.done {
			b.done, b.failed = true, err != io.EOF
			if !b.failed {
				b.clear() // a failed body keeps it: cut closes it at once
			}
		}
		b.mu.Unlock()
	}
	return n, err
}

// cut reports, once the handler returned, whether the body could not be
// read in time; a body not read yet is discarded now, under the deadline.
func (b *deadlineBody) cut() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case !b.done:
		b.done = true
		b.failed = b.ReadCloser.Close() != nil
	case b.failed:
		// Closed now, while the (passed) deadline makes it fail at once:
		// net/http closes an unread body after clearing the deadline, and
		// would wait for the rest of it.
		_ = b.ReadCloser.Close()
	}
	return b.failed
}

// connTracker follows the listener's connections, for the stop report
// (connections cut at the shutdown timeout) and the tests (released
// connections).
type connTracker struct {
	mu    sync.Mutex
	conns map[net.Conn]http.ConnState
}

func (t *connTracker) track(c net.Conn, st http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch st {
	case http.StateClosed, http.StateHijacked:
		delete(t.conns, c)
	default:
		t.conns[c] = st
	}
}

// counts returns the open connections and those of them serving a request.
func (t *connTracker) counts() (open, active int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, st := range t.conns {
		if st == http.StateActive {
			active++
		}
	}
	return len(t.conns), active
}

// stopReport says how a graceful stop went, for the "stopped" line.
type stopReport struct {
	Took       time.Duration
	HandedBack int64 // blocked waits answered "call again"
	Cut        int   // connections still serving a request when the drain was cut
	TimedOut   bool  // the drain ran out of --shutdown-timeout
	Hurried    bool  // a second signal cut the delay or the drain
}

// gracefulStop stops a serving bridge in the order a load balancer needs:
//
//  1. Drain: /readyz answers 503 at once, new /mcp requests get 503 with
//     Retry-After and a JSON-RPC error, the listener stays open; requests in
//     flight and blocked waits go on, for delay (or until hurry closes);
//  2. the bridge hands back blocked waits (clients are told to call
//     tasks/result again), closes its sessions and cuts passthrough
//     streams; the HTTP server stops accepting and finishes what is in
//     flight, within timeout (hurry cuts it short);
//  3. the metrics listener stops and the bridge closes its store.
//
// A drain cut by the timeout or by hurry is reported (stopReport), not an
// error: the store is closed all the same and nothing acknowledged is lost.
func gracefulStop(s *router.Server, srv *http.Server, served <-chan error, ct *connTracker, ms *metricsServer,
	delay, timeout time.Duration, hurry <-chan struct{}) (stopReport, error) {
	start := time.Now()
	var rep stopReport
	var hurried atomic.Bool
	s.Drain()
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-hurry:
			hurried.Store(true)
		}
		t.Stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if hurry != nil {
		go func() {
			select {
			case <-hurry:
				hurried.Store(true)
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	var errs []error
	if err := s.Shutdown(ctx); err != nil && ctx.Err() == nil {
		errs = append(errs, err)
	}
	if err := srv.Shutdown(ctx); err != nil {
		_, rep.Cut = ct.counts()
		_ = srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, fmt.Errorf("http: %w", err))
	}
	rep.TimedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
	if ms != nil {
		if err := ms.srv.Shutdown(ctx); err != nil {
			_ = ms.srv.Close()
		}
		if err := <-ms.served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs = append(errs, fmt.Errorf("metrics http: %w", err))
		}
	}
	if err := s.Close(); err != nil {
		errs = append(errs, err)
	}
	rep.Took = time.Since(start)
	rep.Hurried = hurried.Load()
	rep.HandedBack = s.HandedBack()
	return rep, errors.Join(errs...)
}

// stopSignals follows SIGINT and SIGTERM for `bridge serve`: the first (or
// the end of the parent context) starts the graceful stop, a second one
// during it stops at once.
type stopSignals struct {
	ctx   context.Context // done at the first signal, or when the parent ends
	hurry chan struct{}   // closed at the second signal
	first atomic.Value    // the first signal's name (unset: the parent ended)
	stop  func()
}

func watchStopSignals(parent context.Context, log *slog.Logger) *stopSignals {
	ctx, cancel := context.WithCancel(parent)
	ss := &stopSignals{ctx: ctx, hurry: make(chan struct{})}
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case sig := <-ch:
			ss.first.Store(sig.String())
			cancel()
		case <-ctx.Done():
		case <-quit:
			return
		}
		select {
		case sig := <-ch:
			log.Info("second signal: stopping at once, cutting what is still in flight", "signal", sig.String())
			close(ss.hurry)
		case <-quit:
		}
	}()
	ss.stop = func() {
		signal.Stop(ch)
		close(quit)
		wg.Wait()
		cancel()
	}
	return ss
}

// awaitStop serves until the first signal, then stops gracefully (delay,
// then hs's drain) and logs one "stopped" line saying how long it took and
// what was cut.
func awaitStop(ss *stopSignals, hs *httpServing, log *slog.Logger, delay time.Duration) error {
	<-ss.ctx.Done()
	why, ok := ss.first.Load().(string)
	if !ok {
		why = "the serve context ended"
	}
	log.Info("stopping: /readyz answers 503; new requests get 503 with Retry-After during the shutdown delay, then blocked waits are handed back and requests in flight finish",
		"signal", why, "shutdown_delay", delay.String(), "shutdown_timeout", hs.timeout.String())
	rep, err := hs.drain(delay, ss.hurry)
	args := []any{"took", rep.Took.Round(time.Millisecond).String(), "waits_handed_back", rep.HandedBack}
	switch {
	case rep.Hurried:
		args = append(args, "cut", "second signal", "connections_cut", rep.Cut)
	case rep.TimedOut:
		args = append(args, "cut", "--shutdown-timeout ran out", "connections_cut", rep.Cut)
	}
	log.Info("stopped", args...)
	if err != nil {
		return fmt.Errorf("serve: stop: %w", err)
	}
	return nil
}
