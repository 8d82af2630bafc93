package legacyface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/cmdline"
	"github.com/tasksbridge/tasksbridge/internal/version"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/outbox"
	"github.com/tasksbridge/tasksbridge/runtime/upcred"
	"github.com/tasksbridge/tasksbridge/runtime/watch"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// Bridge serves legacy clients in front of one modern upstream. Create it
// with New; serve HTTP with Handler (or Mux) and stdio with ServeStdio; stop
// it with Shutdown and Close.
type Bridge struct {
	cfg    Config
	log    *slog.Logger
	store  sessionmap.Store
	events sessionmap.EventStore // resumable streams (resume.go); nil: none
	// eventsOutlive: the events are kept outside this process (a shared
	// store), so a stream can be resumed after this process is gone.
	eventsOutlive bool
	settled       intentQueue // settled create intents still to delete (intent.go)
	up            *modernup.Client
	target        string // the upstream's name in errors and watcher keys

	ownStore, ownUp bool

	watch  *watch.Manager
	creds  *upcred.Keeper // principals' freshest upstream credentials (creds.go)
	built  atomic.Bool    // New has returned: the keeper's wake-ups may use everything
	outbox *outbox.Outbox // upstream cancels and input answers owed (outbox.go)
	owed   owed
	sdk    http.Handler // go-sdk's handler behind sdkGuard (autherr.go)
	base   *mcp.Server  // answers go-sdk's version checks for requests that carry a session id

	// drain is cancelled by Shutdown: blocked waits hand their request back.
	drain       context.Context
	cancelDrain context.CancelFunc
	closed      atomic.Bool

	mu       sync.Mutex
	sessions map[string]*session    // the session table (sessions.go), by id
	dormant  map[sessionKey]dormant // idle sessions not kept whole (dormant.go)
	idle     idleList               // whole idle sessions of the table, least recently used first
	// The largest sessions and dormant have been since they were last
	// rebuilt (shrunk, dormant.go).
	sessionsPeak, dormantPeak int
	rehydrates                map[string]*sync.Mutex                // one rehydration at a time per id
	pinWaiters                map[string]map[chan struct{}]struct{} // local task id → blocking tasks/result waits to wake on a cancel
	sentKeys                  map[string]map[string]bool            // local task id → input keys this process answered (exactly once)

	bindings sync.Map // watch.Key → *binding
	reqs     sync.Map // request nonce → *reqInfo
	pending  sync.Map // callKey → chan []byte: lean server→client requests awaiting the client's answer

	alive   streams   // long streams the keep-alive ticker writes to
	beat    heartbeat // the keep-alive ticker's beats
	limits  limits    // per-principal limits (L-72, L-73)
	parking parking   // waits parked without a goroutine (parked.go)

	// pool is the per-source bookkeeping of the session table
	// (sessionshare.go), under mu.
	pool sessionPool

	discMu    sync.Mutex
	discovers map[string]discoverEntry // by principal ("" = shared)

	inflight inflight // long POSTs (tasks/result, tools/call...) being answered

	params paramCache // upstream tools' x-mcp-header annotations (M-11, mcpparam.go)

	readyMu   sync.Mutex
	readyAt   time.Time
	readyErr  error
	bgWG      sync.WaitGroup
	nonceSeed string

	// liveMaxSessions and liveSessionShare are Config.MaxSessions and
	// MaxSessionsPerPrincipal, changed by SetLimits (live.go).
	liveMaxSessions, liveSessionShare atomic.Int64
}

type discoverEntry struct {
	raw     json.RawMessage
	expires time.Time
}

// New builds a Bridge: it opens the store (Config.DataDir) and prepares the
// upstream client. It does not contact the upstream; /readyz does.
func New(cfg Config) (*Bridge, error) {
	cfg.defaults()
	b := &Bridge{
		cfg:        cfg,
		log:        cfg.Logger,
		sessions:   map[string]*session{},
		dormant:    map[sessionKey]dormant{},
		rehydrates: map[string]*sync.Mutex{},
		pinWaiters: map[string]map[chan struct{}]struct{}{},
		sentKeys:   map[string]map[string]bool{},
		discovers:  map[string]discoverEntry{},
		nonceSeed:  randomID(),
	}
	b.drain, b.cancelDrain = context.WithCancel(context.Background())
	b.limits.refused = cfg.Hooks.Refused
	b.SetLimits(Limits{MaxSessions: cfg.MaxSessions, MaxSessionsPerPrincipal: cfg.MaxSessionsPerPrincipal, MaxTasksPerPrincipal: cfg.MaxTasksPerPrincipal, MaxWaitersPerPrincipal: cfg.MaxWaitersPerPrincipal})

	switch n := countSet(cfg.Upstream != "", cfg.UpstreamCommand != "", cfg.UpstreamClient != nil); {
	case n == 0:
		return nil, errors.New("face: no upstream: set Upstream (a URL), UpstreamCommand or UpstreamClient")
	case n > 1:
		return nil, errors.New("face: set only one of Upstream, UpstreamCommand and UpstreamClient")
	}
	switch {
	case cfg.UpstreamClient != nil:
		b.up = cfg.UpstreamClient
	case cfg.Upstream != "":
		if !strings.HasPrefix(cfg.Upstream, "http://") && !strings.HasPrefix(cfg.Upstream, "https://") {
			return nil, fmt.Errorf("face: upstream %q is not an http(s) URL", cfg.Upstream)
		}
		b.up = modernup.NewHTTP(cfg.Upstream, nil)
		b.ownUp = true
	default:
		argv, err := cmdline.Split(cfg.UpstreamCommand)
		if err != nil {
			return nil, fmt.Errorf("face: upstream command: %w", err)
		}
		if len(argv) == 0 {
			return nil, errors.New("face: upstream command is empty")
		}
		b.up = modernup.NewCommand("command "+cfg.UpstreamCommand, func() *exec.Cmd {
			return exec.Command(argv[0], argv[1:]...)
		})
		b.ownUp = true
	}
	b.target = b.up.Target
	b.up.ClientInfo = modern.Implementation{Name: "tasksbridge", Version: version.Version}

	switch {
	case cfg.Store != nil && cfg.DataDir != "":
		return nil, errors.New("face: set only one of DataDir and Store")
	case cfg.Store != nil:
		b.store = cfg.Store
	case cfg.DataDir != "":
		st, err := sessionmap.OpenBadger(cfg.DataDir, sessionmap.WithLogger(cfg.Logger))
		if err != nil {
			return nil, fmt.Errorf("face: open data dir: %w", err)
		}
		b.store, b.ownStore = st, true
	default:
		return nil, errors.New("face: no store: set DataDir or Store")
	}

	if cfg.StreamRetention > 0 {
		b.events = cfg.Events
		if es, ok := b.store.(sessionmap.EventStore); ok && b.events == nil {
			b.events = es
		}
		b.eventsOutlive = b.events != nil
		if b.events == nil {
			b.events = sessionmap.NewMemoryEvents()
		}
	}

	b.startCredentials()
	wc := cfg.Watch
	wc.Source = b.watchSource
	wc.Sink = watch.SinkFunc(b.observe)
	wc.EarlyTerminal = true
	if wc.Logger == nil {
		wc.Logger = cfg.Logger
	}
	b.watch = watch.NewManager(wc)
	b.startOutbox()

	b.base = b.newServer(nil)
	b.sdk = sdkGuard{b: b, next: mcp.NewStreamableHTTPHandler(b.getServer, &mcp.StreamableHTTPOptions{
		Logger:              cfg.Logger,
		SessionTimeout:      max(cfg.LiveSessionTimeout, 0),
		MaxRequestBodyBytes: cfg.MaxBodyBytes,
		// The bridge's own handler checks Host before this one runs.
		DisableLocalhostProtection: cfg.DisableHostCheck,
	})}
	b.keepAlives()
	b.sweeper()
	b.built.Store(true)
	return b, nil
}

func countSet(v ...bool) int {
	n := 0
	for _, x := range v {
		if x {
			n++
		}
	}
	return n
}

// Store returns the bridge's durable index (for operator tools and tests).
func (b *Bridge) Store() sessionmap.Store { return b.store }

// Upstream returns the upstream client.
func (b *Bridge) Upstream() *modernup.Client { return b.up }

// Watching returns the number of running task watchers (tests, metrics).
func (b *Bridge) Watching() int { return b.watch.Watching() }

// Shutdown starts a graceful stop: every blocked tasks/result and internally
// polled tools/call is handed back to its client (a -32603 error saying the
// bridge is restarting; the task itself is untouched and durable), and every
// live session is closed, which ends its streams. Call it before stopping the
// HTTP server; Close afterwards.
func (b *Bridge) Shutdown(ctx context.Context) error {
	b.cancelDrain()
	// Let the handed-back waits reach their clients before the sessions
	// (and their streams) close.
	if err := b.inflight.wait(ctx); err != nil {
		return fmt.Errorf("face: shutdown: %w", err)
	}
	b.mu.Lock()
	live := make([]*session, 0, len(b.sessions))
	for _, s := range b.sessions {
		live = append(live, s)
	}
	b.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for _, s := range live {
			if s.serverSession() == nil {
				s.close() // a record only: nothing to wait for
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.close()
			}()
		}
		wg.Wait()
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("face: shutdown: %w", ctx.Err())
	}
}

// Close stops the watchers and closes the upstream client and the store
// (when the bridge opened them). Sessions stay in the store, so a restarted
// bridge rehydrates them.
func (b *Bridge) Close() error {
	if !b.closed.CompareAndSwap(false, true) {
		return nil
	}
	b.cancelDrain()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_ = b.Shutdown(sctx)
	cancel()
	b.watch.Close()
	b.outbox.Close()
	b.bgWG.Wait()
	b.flushIntents()
	var errs []error
	if b.ownUp {
		if err := b.up.Close(); err != nil {
			errs = append(errs, fmt.Errorf("face: close upstream: %w", err))
		}
	}
	if b.ownStore {
		if err := b.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("face: close store: %w", err))
		}
	}
	return errors.Join(errs...)
}

// inflight counts requests whose answers must go out before the sessions
// close.
type inflight struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed while n == 0
}

func (f *inflight) add() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		f.idle = make(chan struct{})
	}
	f.n++
}

func (f *inflight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.n == 0 {
		close(f.idle)
	}
}

func (f *inflight) wait(ctx context.Context) error {
	f.mu.Lock()
	idle := f.idle
	n := f.n
	f.mu.Unlock()
	if n == 0 {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// goBackground runs f until it returns; Close waits for it.
func (b *Bridge) goBackground(f func()) {
	b.bgWG.Add(1)
	go func() {
		defer b.bgWG.Done()
		f()
	}()
}

// errDrained is the cause of a wait cut short by Shutdown.
var errDrained = errors.New("the bridge is draining")

// msgShuttingDown tells a client whose wait was handed back what to do: the
// task is durable, so the same request (tasks/result with the task id) sent
// again resumes the wait on whichever replica answers it.
const msgShuttingDown = "this bridge replica is shutting down; the task continues: call again to resume waiting (for a task: tasks/result with its task id); another replica, or this one after its restart, answers it"

// errShuttingDown is the answer to a wait cut short by Shutdown.
func errShuttingDown() *rpc.Error {
	return rpc.Errorf(rpc.CodeInternalError, "%s", msgShuttingDown)
}

// upstreamCall sends one request upstream and reports it to the hooks.
func (b *Bridge) upstreamCall(ctx context.Context, method string, params json.RawMessage, opts modernup.CallOptions) (json.RawMessage, error) {
	start := time.Now()
	res, err := b.up.Call(ctx, method, params, opts)
	b.reportUpstream(method, start, err)
	return res, err
}

func (b *Bridge) upstreamCallTool(ctx context.Context, params json.RawMessage, opts modernup.CallOptions) (*modernup.ToolOutcome, error) {
	start := time.Now()
	res, err := b.up.CallTool(ctx, params, opts)
	b.reportUpstream(modern.MethodToolsCall, start, err)
	return res, err
}

func (b *Bridge) reportUpstream(method string, start time.Time, err error) {
	h := b.cfg.Hooks.Upstream
	if h == nil {
		return
	}
	ev := UpstreamEvent{Method: method, Outcome: OutcomeOK, Duration: time.Since(start)}
	if err != nil {
		ev.Outcome, ev.Code = outcomeOf(err)
	}
	h(ev)
}

func outcomeOf(err error) (Outcome, int64) {
	if errors.Is(err, context.Canceled) {
		return OutcomeCancelled, 0
	}
	return OutcomeError, rpc.CodeOf(err)
}

// discover returns the upstream's server/discover result (raw), reused for
// its ttlMs (capped by Config.DiscoverTTL) and per principal when the
// upstream says its result is private.
func (b *Bridge) discover(ctx context.Context, opts modernup.CallOptions, principal string) (json.RawMessage, error) {
	now := time.Now()
	b.discMu.Lock()
	for _, k := range []string{"", "p:" + principal} {
		if e, ok := b.discovers[k]; ok && now.Before(e.expires) {
			b.discMu.Unlock()
			return e.raw, nil
		}
	}
	b.discMu.Unlock()
	raw, err := b.upstreamCall(ctx, modern.MethodDiscover, nil, opts)
	if err != nil {
		return nil, err
	}
	d, err := modern.DecodeDiscoverResult(raw)
	if err != nil {
		return nil, rpc.Errorf(rpc.CodeInternalError, "upstream %s sent an invalid server/discover result: %s", b.target, rpc.As(err).Message)
	}
	ttl := min(time.Duration(d.TTLMs)*time.Millisecond, b.cfg.DiscoverTTL)
	if ttl > 0 {
		key := "p:" + principal
		if d.CacheScope == modern.CachePublic {
			key = ""
		}
		b.discMu.Lock()
		b.discovers[key] = discoverEntry{raw: raw, expires: now.Add(ttl)}
		b.discMu.Unlock()
	}
	return raw, nil
}

// Healthz answers 200 while the process is up.
func (b *Bridge) Healthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok\n"))
	})
}

// readyCache is how long a /readyz verdict is reused, so probes do not
// hammer the upstream.
const readyCache = 2 * time.Second

// Readyz answers 200 when the store is open and the upstream answers
// server/discover, else 503 with the reason.
func (b *Bridge) Readyz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := b.ready(r.Context())
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready: %v\n", err)
			return
		}
		w.Write([]byte("ready\n"))
	})
}

func (b *Bridge) ready(ctx context.Context) error {
	if b.closed.Load() || b.drain.Err() != nil {
		return errors.New("shutting down")
	}
	b.readyMu.Lock()
	defer b.readyMu.Unlock()
	if !b.readyAt.IsZero() && time.Since(b.readyAt) < readyCache {
		return b.readyErr
	}
	b.readyErr = b.checkReady(ctx)
	b.readyAt = time.Now()
	return b.readyErr
}

func (b *Bridge) checkReady(ctx context.Context) error {
	// The store is open when an id lookup answers (not found is fine).
	if _, err := b.store.GetSession(ctx, sessionmap.Scope{Session: "readyz-probe"}); err != nil && !errors.Is(err, sessionmap.ErrNotFound) {
		return fmt.Errorf("store: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// Any answer means the upstream is reachable (it may refuse an
	// anonymous discover); only a transport failure is "not ready".
	if _, err := b.upstreamCall(cctx, modern.MethodDiscover, nil, modernup.CallOptions{}); err != nil && modernup.Retryable(err) {
		return fmt.Errorf("upstream %s: %v", b.target, rpc.As(err).Message)
	}
	return nil
}

// Mux serves the MCP endpoint at /mcp plus /healthz and /readyz.
func (b *Bridge) Mux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/mcp", b.Handler())
	mux.Handle("/healthz", b.Healthz())
	mux.Handle("/readyz", b.Readyz())
	return mux
}
