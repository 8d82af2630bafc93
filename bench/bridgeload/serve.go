package bridgeload

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	httppprof "net/http/pprof"
	neturl "net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// Upstream is the embedded modern server (internal/demo) on a loopback port.
// It also records when each tasks/get request arrived (by its Mcp-Name
// header, the task id: M-32), so a delay can be split into the watcher's
// cadence and the bridge's own processing.
type Upstream struct {
	*demo.Server
	URL  string
	srv  *http.Server
	mu   sync.Mutex
	gets map[string][]time.Time
	once sync.Once
	err  error

	// subscriptions/listen requests being served now, their peak, and all
	// of them (the upstream's view of the bridge's notification streams).
	listens, listensPeak, listensTotal atomic.Int64
}

// Listens returns the subscriptions/listen requests open now, the most open
// at once since the last ResetListenPeak, and how many were opened in all.
func (u *Upstream) Listens() (open, peak, total int64) {
	return u.listens.Load(), u.listensPeak.Load(), u.listensTotal.Load()
}

// ResetListenPeak starts a new peak from the listens open now.
func (u *Upstream) ResetListenPeak() { u.listensPeak.Store(u.listens.Load()) }

// StartUpstream serves a demo server on 127.0.0.1 until Close or ctx ends.
func StartUpstream(ctx context.Context, opts demo.Options) (*Upstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start upstream: %w", err)
	}
	u := &Upstream{Server: demo.New(opts), URL: "http://" + ln.Addr().String() + "/mcp", gets: map[string][]time.Time{}}
	h := u.Handler()
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(modern.HeaderMethod) == modern.MethodSubscriptionsListen {
			n := u.listens.Add(1)
			u.listensTotal.Add(1)
			for p := u.listensPeak.Load(); n > p && !u.listensPeak.CompareAndSwap(p, n); p = u.listensPeak.Load() {
			}
			defer u.listens.Add(-1)
		}
		if r.Header.Get(modern.HeaderMethod) == modern.MethodTasksGet {
			at := time.Now()
			id := r.Header.Get(modern.HeaderName)
			u.mu.Lock()
			u.gets[id] = append(u.gets[id], at)
			u.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	u.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = u.srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = u.Close() })
	return u, nil
}

// GetAfter is when the first tasks/get for task arrived at or after t (zero
// if none did).
func (u *Upstream) GetAfter(task string, t time.Time) time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, at := range u.gets[task] {
		if !at.Before(t) {
			return at
		}
	}
	return time.Time{}
}

// Close ends the listen streams gracefully, then stops serving.
func (u *Upstream) Close() error {
	u.once.Do(func() {
		u.Server.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := u.srv.Shutdown(ctx); err != nil {
			_ = u.srv.Close()
			u.err = fmt.Errorf("stop upstream: %w", err)
		}
	})
	return u.err
}

// BridgeOptions configure a bridge under test. Everything else is the
// face's default, as `bridge serve` would run it.
type BridgeOptions struct {
	// Upstream is the modern server's endpoint URL.
	Upstream string
	// DataDir holds the Badger store (the production store); "" uses the
	// in-memory store.
	DataDir string
	// KeepAlive is the SSE keep-alive interval on tasks/result streams
	// (0: the face's default, 15 s). The scenarios use the first keep-alive
	// comment as the sign that a waiter is blocked in the bridge.
	KeepAlive time.Duration
	// Logger defaults to warnings on stderr.
	Logger *slog.Logger
}

// Bridge is a legacy face serving on a loopback port in this process.
type Bridge struct {
	*legacyface.Bridge
	URL string
	srv *http.Server
	ln  net.Listener
}

// StartBridge serves a face.Bridge at http://127.0.0.1:PORT/mcp.
func StartBridge(opts BridgeOptions) (*Bridge, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	cfg := legacyface.Config{Upstream: opts.Upstream, DataDir: opts.DataDir, KeepAlive: opts.KeepAlive, Logger: opts.Logger}
	if opts.DataDir == "" {
		cfg.Store = sessionmap.NewMemory()
	}
	fb, err := legacyface.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("start bridge: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = fb.Close()
		return nil, fmt.Errorf("start bridge: %w", err)
	}
	mux := fb.Mux()
	debugHandlers(mux)
	b := &Bridge{Bridge: fb, URL: "http://" + ln.Addr().String() + "/mcp", ln: ln,
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = b.srv.Serve(ln) }()
	return b, nil
}

// debugHandlers adds the bench-only introspection endpoints (loopback): the
// runtime's memory breakdown and profiles of the process under test, for
// explaining its RSS.
func debugHandlers(mux *http.ServeMux) {
	mux.HandleFunc("/debug/bridgeload/memstats", serveMemStats)
	mux.Handle("/debug/pprof/heap", httppprof.Handler("heap"))
	mux.Handle("/debug/pprof/goroutine", httppprof.Handler("goroutine"))
}

// RuntimeMem is the Go runtime's view of a bridge process's memory, so the
// report can say what the resident memory is made of.
type RuntimeMem struct {
	Goroutines int
	HeapInuse  uint64 // bytes in in-use heap spans
	HeapLive   uint64 // bytes of reachable objects at the last GC (HeapAlloc right after runtime.GC)
	StackInuse uint64 // goroutine stacks
	Sys        uint64 // everything the runtime obtained from the OS
}

// serveMemStats answers RuntimeMem as JSON after a forced GC (bench only:
// the load tool's child serves it next to /mcp, on loopback).
func serveMemStats(w http.ResponseWriter, r *http.Request) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(RuntimeMem{Goroutines: runtime.NumGoroutine(), HeapInuse: ms.HeapInuse,
		HeapLive: ms.HeapAlloc, StackInuse: ms.StackInuse, Sys: ms.Sys})
}

// FetchRuntimeMem reads RuntimeMem from a bridge started by this package
// (url is its /mcp endpoint).
func FetchRuntimeMem(ctx context.Context, url string) (RuntimeMem, error) {
	var m RuntimeMem
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(url, "/mcp")+"/debug/bridgeload/memstats", nil)
	if err != nil {
		return m, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return m, fmt.Errorf("memstats: %w", err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return m, fmt.Errorf("memstats: %w", err)
	}
	return m, nil
}

// SaveProfile writes the bridge's pprof profile name ("heap",
// "goroutine") to path.
func SaveProfile(ctx context.Context, url, name, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(url, "/mcp")+"/debug/pprof/"+name, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("profile %s: %w", name, err)
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("profile %s: %w", name, err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("profile %s: %w", name, err)
	}
	return f.Close()
}

// Close stops the bridge gracefully: blocked waits are handed back, then the
// listener, the watchers and the store close.
func (b *Bridge) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errs := []error{b.Shutdown(ctx)}
	if err := b.srv.Shutdown(ctx); err != nil {
		_ = b.srv.Close()
		errs = append(errs, fmt.Errorf("http shutdown: %w", err))
	}
	errs = append(errs, b.Bridge.Close())
	return errors.Join(errs...)
}

// ChildMode is the first argument that makes the load tool run as the
// process under test (RunChild).
const ChildMode = "bridge-child"

// Kinds of child process.
const (
	// KindBridge is the bridge as `bridge serve` runs it: router
	// (era detection, metering, all four paths) with the upstream's era
	// pinned, a Badger store (durable group commit, as deployed) in a fresh
	// temporary directory.
	KindBridge = "bridge"
	// KindRevProxy is the cost floor: a bare httputil.ReverseProxy in front
	// of the same upstream, with a keep-alive pool sized like the clients'.
	KindRevProxy = "revproxy"
)

// RunChild is the process under test of the load tool: it serves a bridge
// (or, with -kind revproxy, a bare reverse proxy) in front of -upstream on a
// loopback port, prints "bridge: URL", and stops gracefully when stdin
// closes or ctx ends. With -cpuprofile it writes its CPU profile from start
// to stop.
func RunChild(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) (err error) {
	fs := flag.NewFlagSet(ChildMode, flag.ContinueOnError)
	kind := fs.String("kind", KindBridge, "bridge or revproxy")
	up := fs.String("upstream", "", "upstream endpoint URL")
	era := fs.String("era", "modern", "the upstream's era (pinned: never probed)")
	keep := fs.Duration("keepalive", 0, "SSE keep-alive interval (0: face default)")
	idle := fs.Duration("session-idle-timeout", 0, "legacy session idle timeout (0: face default)")
	memory := fs.Bool("memory", false, "use the in-memory store instead of Badger (isolates disk latency)")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of this process's whole life here")
	idleConns := fs.Int("upstream-idle-conns", 0, "bridge: keep-alive connections per upstream host (0: as deployed, the bridge's own pool)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *up == "" {
		return errors.New("bridge-child: -upstream is required")
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return fmt.Errorf("bridge-child: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("bridge-child: %w", err)
		}
		defer func() {
			pprof.StopCPUProfile()
			err = errors.Join(err, f.Close())
		}()
	}
	var url string
	var stop func() error
	switch *kind {
	case KindBridge:
		dir, err := os.MkdirTemp("", "bridgeload-data-")
		if err != nil {
			return fmt.Errorf("bridge-child: data dir: %w", err)
		}
		defer os.RemoveAll(dir)
		opts := ServerOptions{Upstream: *up, Era: *era, DataDir: dir, KeepAlive: *keep, SessionIdleTimeout: *idle,
			UpstreamIdleConns: *idleConns}
		if *memory {
			opts.DataDir = ""
		}
		s, err := StartServer(opts)
		if err != nil {
			return err
		}
		url, stop = s.URL, s.Close
	case KindRevProxy:
		p, err := StartRevProxy(*up)
		if err != nil {
			return err
		}
		url, stop = p.URL, p.Close
	default:
		return fmt.Errorf("bridge-child: unknown -kind %q", *kind)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, stdin) // returns when the parent closes stdin or dies
		cancel()
	}()
	fmt.Fprintf(stdout, "bridge: %s\n", url)
	<-ctx.Done()
	return stop()
}

// ServerOptions configure a bridge (router, as `bridge serve`
// runs it) under test.
type ServerOptions struct {
	Upstream string
	// Era pins the upstream's era ("modern" or "legacy").
	Era string
	// DataDir holds the Badger store; "" uses the in-memory store.
	DataDir            string
	KeepAlive          time.Duration
	SessionIdleTimeout time.Duration
	// UpstreamIdleConns, when positive, replaces the bridge's upstream
	// transport by a clone of http.DefaultTransport with this
	// MaxIdleConnsPerHost (diagnosis: compares pool sizes; 0 measures the
	// bridge as deployed).
	UpstreamIdleConns int
	// Logger defaults to warnings on stderr.
	Logger *slog.Logger
}

// Served is a handler serving on a loopback port in this process.
type Served struct {
	URL   string
	srv   *http.Server
	close func(context.Context) error
}

// serve serves h's /mcp (plus the bench-only introspection endpoints) on
// 127.0.0.1; closeFn runs on Close, after the listener stopped.
func serve(h http.Handler, shutdown func(context.Context) error, closeFn func() error) (*Served, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	debugHandlers(mux)
	s := &Served{URL: "http://" + ln.Addr().String() + "/mcp", srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	s.close = func(ctx context.Context) error {
		errs := []error{shutdown(ctx)}
		if err := s.srv.Shutdown(ctx); err != nil {
			_ = s.srv.Close()
			errs = append(errs, fmt.Errorf("http shutdown: %w", err))
		}
		return errors.Join(append(errs, closeFn())...)
	}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops gracefully within 10 s.
func (s *Served) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.close(ctx)
}

// StartServer serves router at http://127.0.0.1:PORT/mcp.
func StartServer(opts ServerOptions) (*Served, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	cfg := router.Config{Upstream: opts.Upstream, UpstreamEra: opts.Era, DataDir: opts.DataDir, Logger: opts.Logger,
		KeepAlive: opts.KeepAlive, SessionIdleTimeout: opts.SessionIdleTimeout}
	if opts.DataDir == "" {
		cfg.Store = sessionmap.NewMemory()
	}
	if opts.UpstreamIdleConns > 0 {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = opts.UpstreamIdleConns
		cfg.Transport = tr
	}
	s, err := router.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("start bridge: %w", err)
	}
	sv, err := serve(s.Handler(), s.Shutdown, s.Close)
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("start bridge: %w", err)
	}
	return sv, nil
}

// StartRevProxy serves the cost floor: httputil.ReverseProxy to upstream,
// answers streamed unbuffered (as the bridge streams SSE), connections to
// the upstream kept alive (the clients use up to 64 at once).
func StartRevProxy(upstream string) (*Served, error) {
	u, err := neturl.Parse(upstream)
	if err != nil {
		return nil, fmt.Errorf("start reverse proxy: %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(u); r.Out.URL.Path = u.Path; r.Out.Host = "" },
		Transport:     tr,
		FlushInterval: -1,
		// Clients cut their connections when a run ends; that is not news.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	sv, err := serve(rp, func(context.Context) error { return nil }, func() error { tr.CloseIdleConnections(); return nil })
	if err != nil {
		return nil, fmt.Errorf("start reverse proxy: %w", err)
	}
	return sv, nil
}

// StartLegacyUpstream serves the in-repo legacy fixture
// (internal/testkit/legacyfixture: a go-sdk server with experimental tasks) on
// 127.0.0.1; stop ends it.
func StartLegacyUpstream() (url string, stop func(), err error) {
	return legacyfixture.New(legacyfixture.Options{}).Start()
}
