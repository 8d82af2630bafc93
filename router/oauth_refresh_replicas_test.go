package router_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/redis/go-redis/v9"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/identity"
	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/runtime/coord"
	"github.com/tasksbridge/tasksbridge/runtime/credseal"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// refreshPublicURL is the bridge's public URL (--public-url): the audience
// its tokens must name and the base of its protected resource metadata.
const refreshPublicURL = "http://bridge.test/mcp"

// jwksIssuer is an authorization server on loopback as far as a resource
// server sees one: a JWKS with one RSA key, and tokens it signs.
type jwksIssuer struct {
	srv *httptest.Server
	key *rsa.PrivateKey
}

const jwksKID = "refresh-k1"

func newJWKSIssuer(t *testing.T) *jwksIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &jwksIssuer{key: key}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: jwksKID, Algorithm: "RS256", Use: "sig"}}}
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/jwks" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(is.srv.Close)
	return is
}

// mint signs a token of sub for aud with key (the issuer's own, or a
// forger's claiming the issuer's kid), valid from iat until exp.
func (is *jwksIssuer) mint(t *testing.T, key *rsa.PrivateKey, sub, aud string, iat, exp time.Time) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: jwksKID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(jwt.Claims{
		Issuer: is.srv.URL, Subject: sub, Audience: jwt.Audience{aud},
		IssuedAt: jwt.NewNumericDate(iat), Expiry: jwt.NewNumericDate(exp), ID: sessionmap.NewTaskID(),
	}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// subjectGate is the upstream's token check in front of the demo server:
// it takes any bearer JWT (verifying it is not the point here), hands the
// demo a per-subject credential — so the demo binds tasks to the subject,
// as an upstream that validates JWTs binds them to iss and sub, and a
// refreshed token still sees the subject's tasks — and records the task id
// and Authorization of every tasks/get.
type subjectGate struct {
	next http.Handler
	mu   sync.Mutex
	gets [][2]string // task id, Authorization as received
}

func (g *subjectGate) seenGets() [][2]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.gets)
}

func (g *subjectGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := r.Header.Get("Authorization")
	sub := ""
	if tok, ok := strings.CutPrefix(a, "Bearer "); ok {
		if parts := strings.Split(tok, "."); len(parts) == 3 {
			var c struct {
				Sub string `json:"sub"`
			}
			if b, err := base64.RawURLEncoding.DecodeString(parts[1]); err == nil && json.Unmarshal(b, &c) == nil {
				sub = c.Sub
			}
		}
	}
	if sub == "" {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "cannot read body", http.StatusBadRequest)
			return
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				TaskID string `json:"taskId"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method == "tasks/get" {
			g.mu.Lock()
			g.gets = append(g.gets, [2]string{m.Params.TaskID, a})
			g.mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	r.Header.Set("Authorization", "Subject "+sub)
	g.next.ServeHTTP(w, r)
}

// httpAnswer is one HTTP answer as received.
type httpAnswer struct {
	status int
	header http.Header
	body   []byte
}

// postBytes POSTs one JSON-RPC request (id 7) with authz and sid as given,
// and returns the answer byte for byte.
func postBytes(t *testing.T, ctx context.Context, url, authz, sid, method string, params any) httpAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", authz)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return httpAnswer{status: resp.StatusCode, header: resp.Header, body: b}
}

func resultTextOf(t *testing.T, res json.RawMessage) string {
	t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("not a tool result: %s", res)
	}
	return r.Content[0].Text
}

// waitUntil polls cond (every few milliseconds) until it holds or ctx ends.
func waitUntil(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(5 * time.Millisecond): // polling with a deadline
		}
	}
}

// Token refresh with the bridge's real verified principal (--principal jwt,
// JWKS, audience = the public URL), three replicas on one Redis (sessions,
// tasks and sealed credentials shared, watchers coordinated): alice creates
// 5 tasks with token A on replica 1 and switches to token B on replica 2 in
// the same legacy session, which continues: tasks/list shows the 5, and once
// B is known the watchers poll the upstream with B only; tasks/result on
// replica 3 answers each. Bob (another sub of the same issuer) sees none of
// them: his errors on alice's ids, and on alice's session, are
// byte-identical to those on unknown ones, and his tasks/cancel cancels
// nothing. A forged signature or a token for another audience gets 401
// invalid_token pointing at the bridge's protected resource metadata.
// Redis never holds a token or a subject.
func TestTokenRefreshJWTAcrossReplicasOnRedis(t *testing.T) {
	ctx := ctxT(t)
	is := newJWKSIssuer(t)

	clk := demo.NewFakeClock(time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC))
	dm := demo.New(demo.Options{Clock: clk, PollInterval: 20 * time.Millisecond})
	gate := &subjectGate{next: dm.Handler()}
	ghs := httptest.NewServer(gate)
	t.Cleanup(func() {
		dm.Close()
		ghs.CloseClientConnections()
		ghs.Close()
	})
	upURL := ghs.URL + "/mcp"

	rs := redistest.Start(t)
	prefix := rs.Prefix(t)
	key := make([]byte, credseal.KeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	seal, err := credseal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	var bridges []*bridgeEnv
	var stores []*sessionmap.Redis
	for range 3 {
		st, err := sessionmap.OpenRedis(context.Background(), sessionmap.RedisConfig{URL: rs.URL, Prefix: prefix},
			sessionmap.WithLogger(quietLogger()))
		if err != nil {
			t.Fatal(err)
		}
		stores = append(stores, st)
		co := coord.NewRedis(st.Client(), prefix, quietLogger())
		t.Cleanup(func() { _ = co.Close(); _ = st.Close() })
		res, err := identity.New(ctx, identity.Config{Mode: "jwt", OIDCIssuer: is.srv.URL, JWKSURL: is.srv.URL + "/jwks",
			Audiences: []string{refreshPublicURL}, Logger: quietLogger()})
		if err != nil {
			t.Fatalf("identity.New: %v", err)
		}
		bridges = append(bridges, startBridge(t, router.Config{Upstream: upURL, UpstreamEra: "modern", Store: st, Coord: co,
			CredentialKey: seal, Resolver: res, PublicURL: refreshPublicURL,
			Legacy: func(c *legacyface.Config) {
				c.Watch.DisablePush = true // the watchers poll: every upstream read shows its credential
				c.Watch.IdleTimeout = 2 * time.Minute
			}}))
	}

	now := time.Now()
	tokA := is.mint(t, is.key, "alice", refreshPublicURL, now.Add(-time.Minute), now.Add(10*time.Minute))
	tokB := is.mint(t, is.key, "alice", refreshPublicURL, now, now.Add(time.Hour)) // refreshed: later exp, other jti and iat
	tokBob := is.mint(t, is.key, "bob", refreshPublicURL, now, now.Add(time.Hour))
	authA, authB, authBob := "Bearer "+tokA, "Bearer "+tokB, "Bearer "+tokBob
	alice := sessionmap.KeyPrincipal(stores[0].PrincipalKey(), sessionmap.PrincipalFromSubject(is.srv.URL, "alice"))

	// Tokens the bridge must refuse itself, on every replica.
	forger, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	wantPRM := `resource_metadata="http://bridge.test/.well-known/oauth-protected-resource/mcp"`
	for i, br := range bridges {
		for what, tok := range map[string]string{
			"forged signature": is.mint(t, forger, "alice", refreshPublicURL, now, now.Add(time.Hour)),
			"other audience":   is.mint(t, is.key, "alice", "http://upstream.test/mcp", now, now.Add(time.Hour)),
		} {
			a := postBytes(t, ctx, br.url, "Bearer "+tok, "", "initialize", map[string]any{"protocolVersion": "2025-11-25",
				"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}})
			ch := strings.Join(a.header.Values("WWW-Authenticate"), ", ")
			if a.status != http.StatusUnauthorized || !strings.Contains(ch, `error="invalid_token"`) || !strings.Contains(ch, wantPRM) {
				t.Errorf("replica %d, %s: HTTP %d, WWW-Authenticate %q; want 401 invalid_token with %s", i+1, what, a.status, ch, wantPRM)
			}
		}
	}

	// alice, token A, replica 1: a session and 5 tasks, read there.
	c := newLegacyClient(t, bridges[0].url, "refresh-app")
	c.authz = authA
	mustOK(t, "initialize with A on replica 1", c.initialize(ctx))
	sid := c.sid
	if sid == "" {
		t.Fatal("initialize: no Mcp-Session-Id")
	}
	var ids []string
	for i := range 5 {
		created := mustOK(t, "tools/call with A on replica 1", c.call(ctx, "tools/call", map[string]any{"name": "slow_task",
			"arguments": map[string]any{"ms": 30000 + 1000*i, "text": "r" + string(rune('0'+i))}, "task": map[string]any{}}))
		id := field(t, created, "task.taskId")
		if id == "" {
			t.Fatalf("tools/call: %s; want a task", created)
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		if s := field(t, mustOK(t, "tasks/get with A on replica 1", c.call(ctx, "tasks/get", map[string]any{"taskId": id})), "status"); s != "working" {
			t.Fatalf("task %s is %s, want working", id, s)
		}
	}

	// Token B on replica 2, same session: it continues, with the 5 tasks.
	c.url, c.authz = bridges[1].url, authB
	var list struct {
		Tasks []struct {
			TaskID string `json:"taskId"`
		} `json:"tasks"`
	}
	listed := mustOK(t, "tasks/list with B on replica 2", c.call(ctx, "tasks/list", nil))
	if c.sid != sid {
		t.Fatalf("the session id changed from %q to %q", sid, c.sid)
	}
	if err := json.Unmarshal(listed, &list); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range list.Tasks {
		got = append(got, tk.TaskID)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(ids))
	if !slices.Equal(got, want) {
		t.Fatalf("tasks/list with B on replica 2: %v; want exactly %v", got, want)
	}

	// B reaches every replica's keeper (a sealed record in Redis and a
	// fan-out message): from then on no upstream poll of alice's tasks may
	// carry A. (Watchers without waiters read upstream only when asked, so
	// no poll with A is in flight here.)
	for i, br := range bridges {
		waitUntil(t, ctx, "replica "+string(rune('1'+i))+" to hold token B", func() bool {
			v, ok := br.srv.Credentials().Current(ctx, alice)
			return ok && v == authB
		})
	}
	switched := len(gate.seenGets())

	// bob, his own session on each replica: sees none of alice's tasks; his
	// answers on her ids are those on unknown ids, byte for byte; on her
	// session, those on an unknown session.
	for i, br := range bridges {
		bob := newLegacyClient(t, br.url, "second-app")
		bob.authz = authBob
		mustOK(t, "bob's initialize", bob.initialize(ctx))
		if err := json.Unmarshal(mustOK(t, "bob's tasks/list", bob.call(ctx, "tasks/list", nil)), &list); err != nil || len(list.Tasks) != 0 {
			t.Fatalf("bob's tasks/list on replica %d: %+v %v; want none", i+1, list, err)
		}
		unknown := sessionmap.NewTaskID()
		for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
			theirs := postBytes(t, ctx, br.url, authBob, bob.sid, m, map[string]any{"taskId": ids[i]})
			none := postBytes(t, ctx, br.url, authBob, bob.sid, m, map[string]any{"taskId": unknown})
			a := bytes.ReplaceAll(theirs.body, []byte(ids[i]), []byte("ID"))
			b := bytes.ReplaceAll(none.body, []byte(unknown), []byte("ID"))
			if theirs.status != none.status || theirs.header.Get("Content-Type") != none.header.Get("Content-Type") ||
				!bytes.Equal(a, b) || !bytes.Contains(a, []byte(`"error"`)) {
				t.Fatalf("replica %d, bob's %s: on alice's task HTTP %d %s; on an unknown id HTTP %d %s; want the same error",
					i+1, m, theirs.status, theirs.body, none.status, none.body)
			}
		}
		theirs := postBytes(t, ctx, br.url, authBob, sid, "tasks/list", map[string]any{})
		var rnd [16]byte
		_, _ = rand.Read(rnd[:])
		none := postBytes(t, ctx, br.url, authBob, base64.RawURLEncoding.EncodeToString(rnd[:]), "tasks/list", map[string]any{})
		if theirs.status != none.status || theirs.header.Get("Content-Type") != none.header.Get("Content-Type") ||
			!bytes.Equal(theirs.body, none.body) || theirs.status < 400 {
			t.Fatalf("replica %d, bob on alice's session: HTTP %d %s; on an unknown session HTTP %d %s; want the same refusal",
				i+1, theirs.status, theirs.body, none.status, none.body)
		}
	}

	// The tasks complete upstream; replica 3 delivers every result to alice
	// with B (bob's cancels cancelled nothing).
	clk.Advance(40 * time.Second)
	c.url = bridges[2].url
	for i, id := range ids {
		res := mustOK(t, "tasks/result with B on replica 3", c.call(ctx, "tasks/result", map[string]any{"taskId": id}))
		if got, want := resultTextOf(t, res), "r"+string(rune('0'+i)); got != want {
			t.Fatalf("task %d: result %q, want %q", i, got, want)
		}
	}
	if c.sid != sid {
		t.Fatalf("the session id changed from %q to %q", sid, c.sid)
	}

	// What the upstream saw: polls of alice's tasks with A before the
	// switch, and after it with B only — at least one per task (the poll
	// that read its end).
	upIDs := map[string]string{} // upstream task id → the bridge's
	for _, id := range ids {
		rec, err := stores[0].LookupTask(ctx, id)
		if err != nil || rec.UpstreamTaskID == "" {
			t.Fatalf("the store's record of %s: %+v %v", id, rec, err)
		}
		upIDs[rec.UpstreamTaskID] = id
	}
	gets := gate.seenGets()
	sawA := false
	for _, g := range gets[:switched] {
		sawA = sawA || g[1] == authA
	}
	if !sawA {
		t.Error("no tasks/get with A before the switch: the test does not show a switch")
	}
	polledB := map[string]int{}
	for _, g := range gets[switched:] {
		id, ok := upIDs[g[0]]
		if !ok {
			t.Errorf("a tasks/get of an upstream task %s that is none of alice's", g[0])
			continue
		}
		if g[1] != authB {
			t.Errorf("task %s was polled upstream with %s after every replica held B", id,
				map[bool]string{true: "A", false: "another credential"}[g[1] == authA])
			continue
		}
		polledB[id]++
	}
	for _, id := range ids {
		if polledB[id] == 0 {
			t.Errorf("task %s was not polled upstream after the switch; want its end read with B", id)
		}
	}
	t.Logf("upstream tasks/get: %d before every replica held B, %d after, all with B", switched, len(gets)-switched)

	// Redis holds no token and no subject: credentials are sealed,
	// principals are digests.
	secrets := map[string]string{"token A": tokA, "token B": tokB, "bob's token": tokBob, "the subject alice": "alice"}
	n := 0
	for k, vals := range redisDump(t, ctx, stores[0].Client(), prefix) {
		for _, v := range append(vals, k) {
			n++
			for what, sec := range secrets {
				if strings.Contains(v, sec) {
					t.Errorf("Redis key %s holds %s", k, what)
				}
			}
		}
	}
	if n < 10 {
		t.Fatalf("the Redis dump has %d entries; the check proves nothing", n)
	}
}

// redisDump returns every key under prefix with its values (strings,
// hashes' fields and values, members, stream entries' fields).
func redisDump(t *testing.T, ctx context.Context, rc redis.UniversalClient, prefix string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	it := rc.Scan(ctx, 0, prefix+":*", 1000).Iterator()
	for it.Next(ctx) {
		k := it.Val()
		var vals []string
		switch rc.Type(ctx, k).Val() {
		case "string":
			vals = []string{rc.Get(ctx, k).Val()}
		case "hash":
			for f, v := range rc.HGetAll(ctx, k).Val() {
				vals = append(vals, f, v)
			}
		case "zset":
			vals = rc.ZRange(ctx, k, 0, -1).Val()
		case "set":
			vals = rc.SMembers(ctx, k).Val()
		case "list":
			vals = rc.LRange(ctx, k, 0, -1).Val()
		case "stream":
			for _, m := range rc.XRange(ctx, k, "-", "+").Val() {
				for f, v := range m.Values {
					vals = append(vals, f, fmt.Sprint(v))
				}
			}
		}
		out[k] = vals
	}
	if err := it.Err(); err != nil {
		t.Fatalf("scanning Redis: %v", err)
	}
	return out
}
