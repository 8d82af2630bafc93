package router_test

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/internal/testkit/syncbuf"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// upstreamPRM is the upstream's own resource_metadata: a relayed challenge
// must point at the bridge's instead (RFC 9728 §5.1).
const upstreamPRM = "https://upstream.example/.well-known/oauth-protected-resource/mcp"

// bearerGate is the authorization layer of an MCP server (RFC 6750): a
// request whose Authorization is a token in good passes to next; "Bearer
// narrow" is refused with 403 insufficient_scope; anything else with 401.
type bearerGate struct {
	next    http.Handler
	mu      sync.Mutex
	good    map[string]bool
	anon    bool // requests without Authorization pass too
	refused int
}

func (g *bearerGate) allowEmpty(ok bool) {
	g.mu.Lock()
	g.anon = ok
	g.mu.Unlock()
}

func (g *bearerGate) allow(token string, ok bool) {
	g.mu.Lock()
	g.good[token] = ok
	g.mu.Unlock()
}

func (g *bearerGate) refusals() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refused
}

func (g *bearerGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := r.Header.Get("Authorization")
	tok, _ := strings.CutPrefix(a, "Bearer ")
	g.mu.Lock()
	ok := (a != "" && g.good[tok]) || (a == "" && g.anon)
	if !ok {
		g.refused++
	}
	g.mu.Unlock()
	switch {
	case ok:
		g.next.ServeHTTP(w, r)
	case tok == "narrow":
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="tasks:write", resource_metadata="`+upstreamPRM+`"`)
		http.Error(w, "insufficient scope", http.StatusForbidden)
	case a == "":
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+upstreamPRM+`"`)
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
	default:
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="`+upstreamPRM+`"`)
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
	}
}

// gated serves h behind a bearerGate on loopback and returns the gate and
// the /mcp URL.
func gated(t *testing.T, h http.Handler, tokens ...string) (*bearerGate, string) {
	t.Helper()
	g := &bearerGate{next: h, good: map[string]bool{}}
	for _, tok := range tokens {
		g.good[tok] = true
	}
	hs := httptest.NewServer(g)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return g, hs.URL + "/mcp"
}

// wantRelayed checks that r is the upstream's refusal relayed: the status,
// the challenge with its error and scope kept and resource_metadata
// pointing at the bridge's well-known URL.
func wantRelayed(t *testing.T, what string, r reply, status int, bridgeBase string, keep ...string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: %v, want HTTP %d with the upstream's challenge", what, r, status)
	}
	ch := strings.Join(r.Header.Values("WWW-Authenticate"), ", ")
	wantPRM := `resource_metadata="` + bridgeBase + `/.well-known/oauth-protected-resource/mcp"`
	if !strings.Contains(ch, wantPRM) || strings.Contains(ch, "upstream.example") {
		t.Errorf("%s: WWW-Authenticate %q, want the bridge's metadata (%s)", what, ch, wantPRM)
	}
	for _, k := range keep {
		if !strings.Contains(ch, k) {
			t.Errorf("%s: WWW-Authenticate %q lost %s", what, ch, k)
		}
	}
	if r.Err == nil || !strings.Contains(strings.ToLower(r.Err.Message), "authoriz") {
		t.Errorf("%s: body error %v, want one that names the authorization", what, r.Err)
	}
}

// eraRecord is the upstream era the store remembers for target, and
// whether it remembers one.
func eraRecord(store sessionmap.Store, target string, t *testing.T) (era.Era, bool) {
	t.Helper()
	got, _, err := store.UpstreamEra(ctxT(t), target)
	if errors.Is(err, sessionmap.ErrNotFound) {
		return era.Unknown, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return got, true
}

// --upstream-era auto in front of a modern upstream that requires a bearer
// token: the anonymous probe's 401 decides nothing (no legacy, nothing
// remembered), a client without a token gets the 401 and its challenge,
// /readyz says ready and why, the first authorized request decides modern
// (remembered), metrics and logs say "unauthorized", never "transport";
// after a restart on the same store nothing regresses to legacy.
func TestAutoEraBehindAuthorizingModernUpstream(t *testing.T) {
	ctx := ctxT(t)
	_, up := gated(t, modernHandler(t), "good")
	store := sessionmap.NewMemory()
	var logs syncbuf.Buffer
	env := startBridge(t, router.Config{Upstream: up, UpstreamEra: "auto", Store: store, Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	code, body := get(t, env.base+"/readyz")
	if code != http.StatusOK || !strings.Contains(body, "requires authorization") {
		t.Errorf("/readyz = %d %q, want ready with 'requires authorization'", code, body)
	}
	anon := newLegacyClient(t, env.url, "anon")
	wantRelayed(t, "anonymous initialize", anon.initialize(ctx), http.StatusUnauthorized, env.base)
	if got, ok := eraRecord(store, up, t); ok {
		t.Fatalf("after 401s the store remembers era %q; want nothing", got)
	}

	c := newLegacyClient(t, env.url, "authorized")
	c.authz = "Bearer good"
	res := mustOK(t, "authorized initialize", c.initialize(ctx))
	if v := field(t, res, "protocolVersion"); v != "2025-11-25" {
		t.Fatalf("initialize answered protocolVersion %q (want the legacy face's 2025-11-25): %s", v, res)
	}
	mustOK(t, "tools/list", c.call(ctx, "tools/list", nil))
	if got, ok := eraRecord(store, up, t); !ok || got != era.Modern {
		t.Errorf("remembered era %q (recorded %v), want modern", got, ok)
	}
	// The era is known now: an anonymous client still gets the upstream's
	// refusal (from the legacy face's discover), never -32022.
	wantRelayed(t, "anonymous initialize after the era is known", newLegacyClient(t, env.url, "anon2").initialize(ctx), http.StatusUnauthorized, env.base)

	_, m := get(t, env.base+"/metrics")
	if !strings.Contains(m, `tasksbridge_upstream_requests_total{code="unauthorized",method="server/discover"}`) {
		t.Errorf("no unauthorized server/discover in the metrics:\n%s", grepLines(m, "tasksbridge_upstream_requests_total"))
	}
	if strings.Contains(m, `tasksbridge_upstream_requests_total{code="transport"`) {
		t.Errorf("401s counted as transport:\n%s", grepLines(m, "tasksbridge_upstream_requests_total"))
	}
	out := logs.String()
	if !strings.Contains(out, "upstream requires authorization") || strings.Contains(out, "transport failure") || strings.Contains(out, "unreachable") {
		t.Errorf("logs, want 'upstream requires authorization' and no outage:\n%s", out)
	}

	// A restart on the same store: the remembered era is modern, so the
	// anonymous client is refused by the upstream (relayed), and the
	// authorized one is served by the legacy face.
	env2 := startBridge(t, router.Config{Upstream: up, UpstreamEra: "auto", Store: store})
	wantRelayed(t, "anonymous initialize after a restart", newLegacyClient(t, env2.url, "anon3").initialize(ctx), http.StatusUnauthorized, env2.base)
	c2 := newLegacyClient(t, env2.url, "authorized2")
	c2.authz = "Bearer good"
	res = mustOK(t, "authorized initialize after a restart", c2.initialize(ctx))
	if v := field(t, res, "protocolVersion"); v != "2025-11-25" {
		t.Errorf("after a restart: protocolVersion %q: %s", v, res)
	}
	if got, _ := eraRecord(store, up, t); got != era.Modern {
		t.Errorf("after a restart the store remembers %q, want modern", got)
	}
}

// A fresh bridge whose first request has no token, on a store without a
// memo: the era stays unknown while only anonymous requests come, and the
// first one with a token decides it (not a 400 -32022 from a legacy guess).
func TestAutoEraDecidedByFirstAuthorizedRequest(t *testing.T) {
	ctx := ctxT(t)
	g, up := gated(t, modernHandler(t), "good")
	env := startBridge(t, router.Config{Upstream: up, UpstreamEra: "auto"})
	for i := range 3 {
		wantRelayed(t, "anonymous initialize", newLegacyClient(t, env.url, "anon").initialize(ctx), http.StatusUnauthorized, env.base)
		if i == 0 && g.refusals() == 0 {
			t.Fatal("the upstream saw no request")
		}
	}
	bad := newLegacyClient(t, env.url, "bad")
	bad.authz = "Bearer expired"
	wantRelayed(t, "initialize with an invalid token", bad.initialize(ctx), http.StatusUnauthorized, env.base, `error="invalid_token"`)
	c := newLegacyClient(t, env.url, "good")
	c.authz = "Bearer good"
	res := mustOK(t, "authorized initialize", c.initialize(ctx))
	if v := field(t, res, "protocolVersion"); v != "2025-11-25" {
		t.Errorf("protocolVersion %q: %s", v, res)
	}
}

// --upstream-era modern: a legacy client without a token gets the 401 on
// initialize; with a token it is served until the token is revoked, then a
// forwarded call (tools/list) and a task-augmented tools/call get the 401;
// a token short of a scope gets the 403 with error and scope kept.
func TestPinnedModernRelaysUpstreamRefusals(t *testing.T) {
	ctx := ctxT(t)
	g, up := gated(t, modernHandler(t), "good")
	env := startBridge(t, router.Config{Upstream: up, UpstreamEra: "modern"})

	wantRelayed(t, "anonymous initialize", newLegacyClient(t, env.url, "anon").initialize(ctx), http.StatusUnauthorized, env.base)

	c := newLegacyClient(t, env.url, "client")
	c.authz = "Bearer good"
	mustOK(t, "initialize", c.initialize(ctx))
	mustOK(t, "tools/list", c.call(ctx, "tools/list", nil))
	g.allow("good", false) // revoked
	wantRelayed(t, "tools/list after the token was revoked", c.call(ctx, "tools/list", nil), http.StatusUnauthorized, env.base, `error="invalid_token"`)
	wantRelayed(t, "task-augmented tools/call after the token was revoked",
		c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{}, "task": map[string]any{}}),
		http.StatusUnauthorized, env.base, `error="invalid_token"`)

	n := newLegacyClient(t, env.url, "narrow")
	n.authz = "Bearer narrow"
	wantRelayed(t, "initialize with a narrow token", n.initialize(ctx), http.StatusForbidden, env.base,
		`error="insufficient_scope"`, `scope="tasks:write"`)

	// The client requests count as refused for their credentials, not as
	// bridge failures; upstream, 401 and 403 have labels of their own.
	_, m := get(t, env.base+"/metrics")
	for _, want := range []string{`method="initialize",outcome="unauthorized"`, `method="tools/list",outcome="unauthorized"`,
		`tasksbridge_upstream_requests_total{code="forbidden",method="server/discover"}`, `tasksbridge_upstream_requests_total{code="unauthorized",method="tools/call"}`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s:\n%s", want, grepLines(m, "_requests_total"))
		}
	}
	if strings.Contains(m, `outcome="internal"`) {
		t.Errorf("a relayed refusal counted as an internal error:\n%s", grepLines(m, "tasksbridge_requests_total"))
	}
}

// A modern client on the modern face in front of a legacy upstream that
// requires authorization gets the upstream's 401 (the pool session's
// initialize was refused), and so does a forwarded call refused later.
func TestModernFaceRelaysLegacyUpstreamRefusal(t *testing.T) {
	ctx := ctxT(t)
	g, up := gated(t, legacyHandler(t))
	env := startBridge(t, router.Config{Upstream: up, UpstreamEra: "legacy"})
	c := newModernClient(t, env.url, "modern-client")
	wantRelayed(t, "tools/list (initialize of the pool session refused)", c.call(ctx, "tools/list", nil), http.StatusUnauthorized, env.base)

	// The pool sends no client credentials upstream by default: open the
	// gate for it, then close it again once the session exists.
	g.allowEmpty(true)
	mustOK(t, "tools/list", c.call(ctx, "tools/list", nil))
	g.allowEmpty(false)
	wantRelayed(t, "tools/list refused later", c.call(ctx, "tools/list", nil), http.StatusUnauthorized, env.base)
	_, m := get(t, env.base+"/metrics")
	if !strings.Contains(m, `code="unauthorized",method="initialize"`) || !strings.Contains(m, `code="unauthorized",method="tools/list"`) {
		t.Errorf("metrics:\n%s", grepLines(m, "tasksbridge_upstream_requests_total"))
	}
}

// An upstream whose TLS certificate the bridge does not trust: counted as
// code="tls", and the log says TLS.
func TestUpstreamTLSFailureIsNamed(t *testing.T) {
	ctx := ctxT(t)
	hs := httptest.NewTLSServer(modernHandler(t))
	t.Cleanup(hs.Close)
	var logs syncbuf.Buffer
	env := startBridge(t, router.Config{Upstream: hs.URL + "/mcp", UpstreamEra: "modern", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	r := newLegacyClient(t, env.url, "c").initialize(ctx)
	if r.Err == nil {
		t.Fatalf("initialize through an untrusted upstream: %v", r)
	}
	_, m := get(t, env.base+"/metrics")
	if !strings.Contains(m, `tasksbridge_upstream_requests_total{code="tls",method="server/discover"}`) {
		t.Errorf("metrics:\n%s", grepLines(m, "tasksbridge_upstream_requests_total"))
	}
	if !strings.Contains(logs.String(), "TLS handshake") {
		t.Errorf("logs:\n%s", logs.String())
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// The legacy face's other paths that call the upstream for a request relay
// a refusal too: tasks/get of a live task (its refresh asks upstream), the
// go-sdk-served forwarded methods (resources/list, prompts/list as plain
// JSON, resources/read and prompts/get on the streaming writer).
func TestLegacyFaceRelaysRefusalOnEveryPath(t *testing.T) {
	ctx := ctxT(t)
	g, up := gated(t, modernHandler(t), "good")
	env := startBridge(t, router.Config{Upstream: up, UpstreamEra: "modern"})
	c := newLegacyClient(t, env.url, "client")
	c.authz = "Bearer good"
	mustOK(t, "initialize", c.initialize(ctx))
	res := mustOK(t, "tools/call", c.call(ctx, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 30000, "text": "x"}, "task": map[string]any{}}))
	id := field(t, res, "task.taskId")
	mustOK(t, "resources/list", c.call(ctx, "resources/list", nil))
	g.allow("good", false)
	for _, call := range []struct {
		method string
		params map[string]any
	}{
		{"tasks/get", map[string]any{"taskId": id}},
		{"resources/list", map[string]any{}},
		{"prompts/list", map[string]any{}},
		{"resources/read", map[string]any{"uri": "demo://x"}},
		{"prompts/get", map[string]any{"name": "p"}},
	} {
		wantRelayed(t, call.method+" after the token was revoked", c.call(ctx, call.method, call.params), http.StatusUnauthorized, env.base, `error="invalid_token"`)
	}
}
