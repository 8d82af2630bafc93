//go:build unix

package authe2e_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/tasksbridge/tasksbridge/modern"
)

// A modern (2026-07-28 + tasks extension) client on go-sdk v1.8.0 with
// go-sdk's own OAuth support: auth.AuthorizationCodeHandler discovers the
// protected resource metadata from the 401 (RFC 9728), the authorization
// server from it (RFC 8414), registers itself dynamically (RFC 7591), runs
// the authorization code flow with PKCE and the resource indicator
// (RFC 8707) and retries. The authorization server's user approves by
// itself; fetchCode follows its redirects like a browser would.

const redirectURL = "http://127.0.0.1/callback"

// fetchCode is the AuthorizationCodeFetcher: GET the authorization URL and
// follow the redirects (login and consent approve themselves) with a cookie
// jar until one points at redirectURL; its query has the code.
func fetchCode(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	var final *url.URL
	c := &http.Client{Jar: jar, Timeout: 20 * time.Second, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), redirectURL) {
			final = req.URL
			return http.ErrUseLastResponse
		}
		if len(via) > 10 {
			return errors.New("more than 10 redirects from the authorization endpoint")
		}
		return nil
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("authorization endpoint: %w", err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if final == nil {
		return nil, fmt.Errorf("the authorization endpoint did not redirect to %s (HTTP %d: %s)", redirectURL, resp.StatusCode, body)
	}
	q := final.Query()
	if e := q.Get("error"); e != "" {
		return nil, fmt.Errorf("authorization refused: %s: %s", e, q.Get("error_description"))
	}
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// recorder keeps every HTTP exchange of the client (never a token) for
// failure messages, and the last access token's claims.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	log  []string
	aud  []string
	jtis map[string]bool // distinct access tokens sent
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	method := req.Header.Get("Mcp-Method")
	if method == "" && req.GetBody != nil {
		if rc, err := req.GetBody(); err == nil {
			var m struct {
				Method string `json:"method"`
			}
			b, _ := io.ReadAll(rc)
			_ = json.Unmarshal(b, &m)
			method = m.Method
		}
	}
	if tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
		r.noteAudience(tok)
	}
	resp, err := r.next.RoundTrip(req)
	line := fmt.Sprintf("%s %s %s authorized=%v → ", req.Method, req.URL.Redacted(), method, req.Header.Get("Authorization") != "")
	if err != nil {
		line += err.Error()
	} else {
		line += fmt.Sprintf("%d %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	r.mu.Lock()
	r.log = append(r.log, line)
	r.mu.Unlock()
	return resp, err
}

// noteAudience records the aud of the JWT the client sends (decoded, not
// verified: the server verifies).
func (r *recorder) noteAudience(tok string) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return
	}
	raw, err := jsonBase64(parts[1])
	if err != nil {
		return
	}
	var c struct {
		Aud any    `json:"aud"`
		JTI string `json:"jti"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return
	}
	var aud []string
	switch v := c.Aud.(type) {
	case string:
		aud = []string{v}
	case []any:
		for _, a := range v {
			if s, ok := a.(string); ok {
				aud = append(aud, s)
			}
		}
	}
	r.mu.Lock()
	r.aud = aud
	if r.jtis == nil {
		r.jtis = map[string]bool{}
	}
	r.jtis[c.JTI] = true
	r.mu.Unlock()
}

// tokens is how many distinct access tokens the client sent.
func (r *recorder) tokens() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.jtis)
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return "\n  " + strings.Join(r.log, "\n  ")
}

// mcpNameRT sets Mcp-Name = params.taskId on tasks/* requests (M-32), which
// go-sdk v1.8.0 does not.
type mcpNameRT struct{ next http.RoundTripper }

func (t mcpNameRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if m := r.Header.Get("Mcp-Method"); strings.HasPrefix(m, "tasks/") && r.GetBody != nil && r.Header.Get("Mcp-Name") == "" {
		if rc, err := r.GetBody(); err == nil {
			b, _ := io.ReadAll(rc)
			var p struct {
				Params struct {
					TaskID string `json:"taskId"`
				} `json:"params"`
			}
			if json.Unmarshal(b, &p) == nil && p.Params.TaskID != "" {
				r = r.Clone(r.Context())
				r.Body = io.NopCloser(bytes.NewReader(b))
				r.Header.Set("Mcp-Name", modern.EncodeHeaderValue(p.Params.TaskID))
			}
		}
	}
	return t.next.RoundTrip(r)
}

const createTaskKey = "tasksbridge.test/createTask"

// taskPreserving keeps a CreateTaskResult (resultType "task") alive through
// ClientSession.CallTool, which would drop it, by moving it into _meta.
type taskPreserving struct{ inner mcp.Transport }

func (t taskPreserving) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &taskPreservingConn{Connection: c}, nil
}

type taskPreservingConn struct{ mcp.Connection }

func (c *taskPreservingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil && resp.Error == nil && len(resp.Result) > 0 {
		var probe struct {
			ResultType string `json:"resultType"`
		}
		if json.Unmarshal(resp.Result, &probe) == nil && probe.ResultType == "task" {
			wrapped, _ := json.Marshal(map[string]any{
				"resultType": "complete", "content": []any{},
				"_meta": map[string]any{createTaskKey: json.RawMessage(resp.Result)},
			})
			resp.Result = wrapped
		}
	}
	return msg, err
}

type taskIDParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

type detailedTask struct {
	mcp.ResultBase
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	PollIntervalMs *int64          `json:"pollIntervalMs,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          *jsonrpc.Error  `json:"error,omitempty"`
}

// oauthModernClient is a connected go-sdk modern client that authorized
// itself, and what it saw.
type oauthModernClient struct {
	cs  *mcp.ClientSession
	rec *recorder
}

// connectOAuthModern connects to url with go-sdk's OAuth handler. It fails
// the test with every HTTP exchange when connecting fails.
func connectOAuthModern(t *testing.T, ctx context.Context, url string) *oauthModernClient {
	t.Helper()
	rec := &recorder{next: http.DefaultTransport}
	hc := &http.Client{Transport: rec, Timeout: 30 * time.Second}
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirectURL},
			GrantTypes:   []string{"authorization_code", "refresh_token"},
			ClientName:   "tasksbridge-go-sdk-modern-client",
		}},
		RedirectURL:              redirectURL,
		AuthorizationCodeFetcher: fetchCode,
		Client:                   hc,
	})
	if err != nil {
		t.Fatal(err)
	}
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(modern.TasksExtensionID, nil)
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-oauth-modern-client", Version: "1"}, &mcp.ClientOptions{
		Capabilities: caps,
		Logger:       slog.New(slog.DiscardHandler),
	})
	for _, m := range []string{"tasks/get", "tasks/cancel"} {
		if err := mcp.AddSendingCustomMethod[*taskIDParams, *detailedTask](client, m); err != nil {
			t.Fatal(err)
		}
	}
	tr := &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1,
		OAuthHandler: h, HTTPClient: &http.Client{Transport: mcpNameRT{rec}}}
	cs, err := client.Connect(ctx, taskPreserving{tr}, &mcp.ClientSessionOptions{ProtocolVersion: modern.ProtocolVersion})
	if err != nil {
		t.Fatalf("connect to %s with OAuth: %v\nHTTP exchanges:%s", url, err, rec)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != modern.ProtocolVersion {
		t.Fatalf("negotiated %s, want %s", got, modern.ProtocolVersion)
	}
	if _, ok := cs.InitializeResult().Capabilities.Extensions[modern.TasksExtensionID]; !ok {
		t.Fatalf("the server did not advertise the tasks extension: %+v", cs.InitializeResult().Capabilities)
	}
	return &oauthModernClient{cs: cs, rec: rec}
}

// runTask calls tool as a task, polls tasks/get at its pollIntervalMs (at
// least minPoll) until it is terminal and returns the final task.
func (c *oauthModernClient) runTask(t *testing.T, ctx context.Context, tool string, args map[string]any, minPoll time.Duration) *detailedTask {
	t.Helper()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v\nHTTP exchanges:%s", tool, err, c.rec)
	}
	raw, ok := res.Meta[createTaskKey]
	if !ok {
		t.Fatalf("tools/call %s answered without a task: %+v", tool, res)
	}
	b, _ := json.Marshal(raw)
	var ct struct {
		TaskID string `json:"taskId"`
	}
	if err := json.Unmarshal(b, &ct); err != nil || ct.TaskID == "" {
		t.Fatalf("CreateTaskResult %s", b)
	}
	for {
		d, err := mcp.CallCustomMethod[*taskIDParams, *detailedTask](ctx, c.cs, "tasks/get", &taskIDParams{TaskID: ct.TaskID})
		if err != nil {
			t.Fatalf("tasks/get %s: %v\nHTTP exchanges:%s", ct.TaskID, err, c.rec)
		}
		if d.Status == "completed" || d.Status == "failed" || d.Status == "cancelled" {
			return d
		}
		wait := 50 * time.Millisecond
		if d.PollIntervalMs != nil && *d.PollIntervalMs > 0 {
			wait = time.Duration(*d.PollIntervalMs) * time.Millisecond
		}
		wait = max(wait, minPoll)
		select {
		case <-ctx.Done():
			t.Fatalf("task %s still %s", ct.TaskID, d.Status)
		case <-time.After(wait):
		}
	}
}

func jsonBase64(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
}

// checkModernTask runs slow_task as a task through url and checks it completed
// with the text, under a token whose aud is url.
func checkModernTask(t *testing.T, url string, up *gate) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	c := connectOAuthModern(t, ctx, url)
	d := c.runTask(t, ctx, "slow_task", map[string]any{"ms": 200, "text": "modern oauth task"}, 0)
	if d.Status != "completed" {
		t.Fatalf("task ended %s (%s %v), want completed", d.Status, d.StatusMessage, d.Error)
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(d.Result, &r); err != nil || r.IsError || len(r.Content) == 0 || !strings.Contains(r.Content[0].Text, "modern oauth task") {
		t.Errorf("task result %s (%v), want the text back", d.Result, err)
	}
	c.rec.mu.Lock()
	aud := c.rec.aud
	c.rec.mu.Unlock()
	if len(aud) != 1 || aud[0] != url {
		t.Errorf("the client's token has aud %v, want [%s] (RFC 8707: the URL it dialed)", aud, url)
	}
	if up.accepted.Load() == 0 {
		t.Errorf("the upstream accepted no request (refused: %v)", up.Refusals())
	}
}

// Baseline without a bridge: go-sdk's OAuth client against the protected
// modern upstream directly.
func TestBaselineGoSDKOAuthClientProtectedModern(t *testing.T) {
	t.Parallel()
	as := startAS(t, 0)
	up := startProtectedModern(t, as)
	checkModernTask(t, up.URL(), up)
}

// b1. go-sdk's OAuth modern client through the bridge's passthrough to the
// protected modern upstream: discovery through the bridge (401 → the
// bridge's metadata → the authorization server), a token for the bridge's
// URL, and a task created and polled with it.
func TestGoSDKOAuthClientPassthrough(t *testing.T) {
	t.Parallel()
	as := startAS(t, 0)
	up := startProtectedModern(t, as)
	b := startBridge(t, up.URL(), func(pub string) []string {
		up.SetAudience(pub)
		return bridgeAuthFlags(pub, as.Issuer)
	})
	checkModernTask(t, b.URL, up)
}

// b2. go-sdk's OAuth modern client through the bridge's modern face in front
// of the protected TypeScript SDK legacy fixture: the same flow, and the
// legacy task behind the modern one is created and read with the token.
func TestGoSDKOAuthClientModernFace(t *testing.T) {
	t.Parallel()
	as := startAS(t, 0)
	up := startProtectedLegacy(t, as)
	b := startBridge(t, up.URL(), func(pub string) []string {
		up.SetAudience(pub)
		return bridgeAuthFlags(pub, as.Issuer)
	})
	checkModernTask(t, b.URL, up)
}

// refreshTTL is the token lifetime of the refresh tests. golang.org/x/oauth2
// treats a token as expired 10 s before its exp, so a 12 s token is used
// for about 2 s; after that the client refreshes it (refresh_token grant)
// before each request.
const refreshTTL = 12 * time.Second

// checkModernTaskAcrossRefresh creates a 4 s task through url with one
// access token and polls it (every 500 ms) until it completes, under the
// refreshed tokens that follow: the task must survive the token refresh (the
// principal is the token's (iss, sub), not the token).
func checkModernTaskAcrossRefresh(t *testing.T, url string, up *gate) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	c := connectOAuthModern(t, ctx, url)
	d := c.runTask(t, ctx, "slow_task", map[string]any{"ms": 4000, "text": "outlives its token"}, 500*time.Millisecond)
	if d.Status != "completed" {
		t.Fatalf("task ended %s (%s %v), want completed\nHTTP exchanges:%s", d.Status, d.StatusMessage, d.Error, c.rec)
	}
	if n := c.rec.tokens(); n < 2 {
		t.Errorf("the client sent %d distinct access tokens, want a refresh (2 or more)", n)
	}
	if up.accepted.Load() == 0 {
		t.Errorf("the upstream accepted no request (refused: %v)", up.Refusals())
	}
}

// Baseline without a bridge: a task outlives its access token, directly.
func TestBaselineGoSDKOAuthRefreshProtectedModern(t *testing.T) {
	t.Parallel()
	as := startAS(t, refreshTTL)
	up := startProtectedModern(t, as)
	checkModernTaskAcrossRefresh(t, up.URL(), up)
}

// b1'. A task outlives its access token through the bridge's passthrough.
func TestGoSDKOAuthRefreshPassthrough(t *testing.T) {
	t.Parallel()
	as := startAS(t, refreshTTL)
	up := startProtectedModern(t, as)
	b := startBridge(t, up.URL(), func(pub string) []string {
		up.SetAudience(pub)
		return bridgeAuthFlags(pub, as.Issuer)
	})
	checkModernTaskAcrossRefresh(t, b.URL, up)
}

// b2'. A task outlives its access token through the modern face: the legacy
// task behind it, its legacy session and the face's polls of the upstream
// must go on under the refreshed token.
func TestGoSDKOAuthRefreshModernFace(t *testing.T) {
	t.Parallel()
	as := startAS(t, refreshTTL)
	up := startProtectedLegacy(t, as)
	b := startBridge(t, up.URL(), func(pub string) []string {
		up.SetAudience(pub)
		return bridgeAuthFlags(pub, as.Issuer)
	})
	checkModernTaskAcrossRefresh(t, b.URL, up)
}
