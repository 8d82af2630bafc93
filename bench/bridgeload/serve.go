package bridgeload

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/legacy/face"
	"github.com/tasksbridge/tasksbridge/modern"
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
}

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
	*face.Bridge
	URL string
	srv *http.Server
	ln  net.Listener
}

// StartBridge serves a face.Bridge at http://127.0.0.1:PORT/mcp.
func StartBridge(opts BridgeOptions) (*Bridge, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	cfg := face.Config{Upstream: opts.Upstream, DataDir: opts.DataDir, KeepAlive: opts.KeepAlive, Logger: opts.Logger}
	if opts.DataDir == "" {
		cfg.Store = sessionmap.NewMemory()
	}
	fb, err := face.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("start bridge: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = fb.Close()
		return nil, fmt.Errorf("start bridge: %w", err)
	}
	mux := fb.Mux()
	// Bench-only introspection (loopback): the runtime's memory breakdown
	// and profiles of the bridge process, for explaining its RSS.
	mux.HandleFunc("/debug/bridgeload/memstats", serveMemStats)
	mux.Handle("/debug/pprof/heap", pprof.Handler("heap"))
	mux.Handle("/debug/pprof/goroutine", pprof.Handler("goroutine"))
	b := &Bridge{Bridge: fb, URL: "http://" + ln.Addr().String() + "/mcp", ln: ln,
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = b.srv.Serve(ln) }()
	return b, nil
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
// bridge process (RunChild).
const ChildMode = "bridge-child"

// RunChild is the bridge process of the load tool: it serves a bridge in
// front of -upstream on a loopback port with a Badger store in a fresh
// temporary directory (or the memory store with -memory), prints "bridge: URL", and stops gracefully when stdin
// closes or ctx ends.
func RunChild(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet(ChildMode, flag.ContinueOnError)
	up := fs.String("upstream", "", "modern upstream endpoint URL")
	keep := fs.Duration("keepalive", 0, "SSE keep-alive interval (0: face default)")
	memory := fs.Bool("memory", false, "use the in-memory store instead of Badger (isolates disk latency)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *up == "" {
		return errors.New("bridge-child: -upstream is required")
	}
	dir, err := os.MkdirTemp("", "bridgeload-data-")
	if err != nil {
		return fmt.Errorf("bridge-child: data dir: %w", err)
	}
	defer os.RemoveAll(dir)
	opts := BridgeOptions{Upstream: *up, DataDir: dir, KeepAlive: *keep}
	if *memory {
		opts.DataDir = ""
	}
	b, err := StartBridge(opts)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, stdin) // returns when the parent closes stdin or dies
		cancel()
	}()
	fmt.Fprintf(stdout, "bridge: %s\n", b.URL)
	<-ctx.Done()
	return b.Close()
}
