package bridgeload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// NewHTTPClient is the one HTTP client configuration both paths use:
// HTTP/1.1 keep-alive on loopback, idle pool sized for conns concurrent
// requests, no compression, no proxy, no overall timeout (calls carry
// contexts; blocked tasks/result streams are long by design).
func NewHTTPClient(conns int) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: max(conns, 2),
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	return &http.Client{Transport: tr}
}

// Reply is one JSON-RPC answer to a POST.
type Reply struct {
	Status int
	Header http.Header
	Result json.RawMessage
	Err    *rpc.Error
	// Comments counts SSE comment lines (keep-alives) seen before the answer.
	Comments int
}

// Hooks observe a call's SSE stream as it arrives.
type Hooks struct {
	// Comment is called on every SSE comment line (the bridge's keep-alive:
	// on tasks/result it proves the request reached the handler and blocks).
	Comment func()
}

// post sends one JSON-RPC message and reads the answer with id (id < 0: a
// notification, expecting 202). Answers come as application/json or as an
// SSE stream on which requests and notifications before the answer are
// skipped (the benchmark tools send none the client must answer).
func post(ctx context.Context, hc *http.Client, url string, hdr http.Header, body []byte, id int64, h Hooks) (*Reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header = hdr.Clone()
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", url, err)
	}
	defer resp.Body.Close()
	r := &Reply{Status: resp.StatusCode, Header: resp.Header}
	ct := resp.Header.Get("Content-Type")
	switch {
	case id < 0:
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusAccepted {
			return r, fmt.Errorf("notification: HTTP %d", resp.StatusCode)
		}
		return r, nil
	case strings.HasPrefix(ct, "text/event-stream"):
		if err := readSSE(resp.Body, id, r, h); err != nil {
			return r, fmt.Errorf("read SSE answer (HTTP %d): %w", resp.StatusCode, err)
		}
		// Read the stream to its end, as SDK clients do: the server ends a
		// POST's stream after its answer, and only a body read to the end
		// lets the connection go back to the pool (otherwise every call
		// would pay for a new connection on every path).
		_, _ = io.Copy(io.Discard, resp.Body)
		return r, nil
	case strings.HasPrefix(ct, "application/json"):
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return r, fmt.Errorf("read JSON answer: %w", err)
		}
		if err := r.fill(b); err != nil {
			return r, err
		}
		return r, nil
	default:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return r, fmt.Errorf("HTTP %d %q: %s", resp.StatusCode, ct, bytes.TrimSpace(b))
	}
}

func (r *Reply) fill(env []byte) error {
	var e struct {
		Result json.RawMessage `json:"result"`
		Error  *rpc.Error      `json:"error"`
	}
	if err := json.Unmarshal(env, &e); err != nil {
		return fmt.Errorf("answer is not JSON-RPC: %w", err)
	}
	r.Result, r.Err = e.Result, e.Error
	if r.Result == nil && r.Err == nil {
		return fmt.Errorf("answer has neither result nor error: %.200s", env)
	}
	return nil
}

// readSSE reads events until the response whose id is id.
func readSSE(body io.Reader, id int64, r *Reply, h Hooks) error {
	br := bufio.NewReaderSize(body, 4096)
	var data []byte
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long data line: collect the rest of it.
			rest, err2 := br.ReadBytes('\n')
			line = append(append([]byte(nil), line...), rest...)
			err = err2
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) > 0 && line[0] == ':':
			r.Comments++
			if h.Comment != nil {
				h.Comment()
			}
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(line[5:], []byte(" "))...)
		case len(line) == 0:
			if len(data) == 0 {
				continue
			}
			var probe struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if err := json.Unmarshal(data, &probe); err != nil {
				return fmt.Errorf("SSE data is not JSON: %.200s", data)
			}
			if probe.Method == "" && string(probe.ID) == strconv.FormatInt(id, 10) {
				return r.fill(data)
			}
			data = data[:0]
		}
	}
}

// envelope encodes a JSON-RPC request (id ≥ 0) or notification (id < 0)
// without reflection: params is already JSON.
func envelope(id int64, method string, params []byte) []byte {
	b := make([]byte, 0, 64+len(method)+len(params))
	b = append(b, `{"jsonrpc":"2.0",`...)
	if id >= 0 {
		b = append(b, `"id":`...)
		b = strconv.AppendInt(b, id, 10)
		b = append(b, ',')
	}
	b = append(b, `"method":`...)
	b = strconv.AppendQuote(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// Legacy is one 2025-11-25 Streamable HTTP session (Mcp-Session-Id), the way
// an unchanged legacy client talks to the bridge.
type Legacy struct {
	url  string
	hc   *http.Client
	hdr  http.Header
	next atomic.Int64
}

// DialLegacy performs initialize and notifications/initialized.
func DialLegacy(ctx context.Context, hc *http.Client, url string) (*Legacy, error) {
	return DialLegacyAs(ctx, hc, url, "")
}

// DialLegacyAs is DialLegacy for a client that sends authorization (its
// Authorization header, on every request of the session; "" for none): the
// bridge and the upstream then see it as its own principal.
func DialLegacyAs(ctx context.Context, hc *http.Client, url, authorization string) (*Legacy, error) {
	l, r, err := initialize(ctx, hc, url, authorization)
	if err != nil {
		return nil, err
	}
	if r.Err != nil {
		return nil, fmt.Errorf("initialize: %w", r.Err)
	}
	if l == nil {
		return nil, errors.New("initialize: no Mcp-Session-Id")
	}
	if _, err := post(ctx, hc, url, l.hdr, envelope(-1, "notifications/initialized", nil), -1, Hooks{}); err != nil {
		return nil, fmt.Errorf("notifications/initialized: %w", err)
	}
	return l, nil
}

// Initialize sends one initialize request (no Authorization header, as an
// anonymous client would) and nothing else. l is the session it opened, nil
// when the answer named none (a refusal: see r's Status and Err).
func Initialize(ctx context.Context, hc *http.Client, url string) (l *Legacy, r *Reply, err error) {
	return initialize(ctx, hc, url, "")
}

func initialize(ctx context.Context, hc *http.Client, url, authorization string) (l *Legacy, r *Reply, err error) {
	hdr := http.Header{}
	if authorization != "" {
		hdr.Set("Authorization", authorization)
	}
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Accept", "application/json, text/event-stream")
	r, err = post(ctx, hc, url, hdr, envelope(0, legacy.MethodInitialize, initParams), 0, Hooks{})
	if err != nil {
		return nil, r, fmt.Errorf("initialize: %w", err)
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" || r.Err != nil {
		return nil, r, nil
	}
	l = &Legacy{url: url, hc: hc, hdr: hdr}
	l.hdr.Set("Mcp-Session-Id", sid)
	l.hdr.Set("MCP-Protocol-Version", legacy.ProtocolVersion)
	return l, r, nil
}

var initParams, _ = json.Marshal(map[string]any{
	"protocolVersion": legacy.ProtocolVersion,
	"capabilities":    map[string]any{},
	"clientInfo":      map[string]any{"name": "bridgeload", "version": "1.0.0"},
})

// Ping sends ping on the session and returns the HTTP status of the answer
// (and the answer, when it is a JSON-RPC one).
func (l *Legacy) Ping(ctx context.Context) (int, *Reply, error) {
	r, err := l.Call(ctx, "ping", []byte(`{}`), Hooks{})
	if r == nil {
		return 0, nil, err
	}
	return r.Status, r, err
}

// Call sends one request with params (JSON) and returns its answer.
func (l *Legacy) Call(ctx context.Context, method string, params []byte, h Hooks) (*Reply, error) {
	id := l.next.Add(1)
	return post(ctx, l.hc, l.url, l.hdr, envelope(id, method, params), id, h)
}

// Modern is a stateless 2026-07-28 client that declares the tasks extension
// on every request (per-request _meta plus the routing headers).
type Modern struct {
	url  string
	hc   *http.Client
	hdr  http.Header
	next atomic.Int64
}

// NewModern returns a modern client for the endpoint url.
func NewModern(hc *http.Client, url string) *Modern {
	m := &Modern{url: url, hc: hc, hdr: http.Header{}}
	m.hdr.Set("Content-Type", "application/json")
	m.hdr.Set("Accept", "application/json, text/event-stream")
	m.hdr.Set(modern.HeaderProtocolVersion, modern.ProtocolVersion)
	return m
}

// modernMeta is the per-request _meta of every modern call (M-01, M-02, M-20).
var modernMeta = func() json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		modern.MetaKeyProtocolVersion:    modern.ProtocolVersion,
		modern.MetaKeyClientCapabilities: modern.ClientCapabilities{Extensions: map[string]modern.Object{modern.TasksExtensionID: {}}},
		modern.MetaKeyClientInfo:         map[string]any{"name": "bridgeload", "version": "1.0.0"},
	})
	return b
}()

// WithMeta adds the per-request _meta to a params object (JSON).
func WithMeta(params []byte) []byte {
	params = bytes.TrimSpace(params)
	if len(params) < 2 || params[0] != '{' {
		return params
	}
	out := make([]byte, 0, len(params)+len(modernMeta)+12)
	out = append(out, `{"_meta":`...)
	out = append(out, modernMeta...)
	if inner := bytes.TrimSpace(params[1 : len(params)-1]); len(inner) > 0 {
		out = append(out, ',')
		out = append(out, inner...)
	}
	return append(out, '}')
}

// Call sends one request; params must already carry _meta (WithMeta). name
// is the Mcp-Name header value (tool name or task id), "" for none.
func (m *Modern) Call(ctx context.Context, method, name string, params []byte, h Hooks) (*Reply, error) {
	return m.send(ctx, m.headers(method, name), method, params, h)
}

// headers are the request headers of method (Mcp-Method) on name (Mcp-Name).
func (m *Modern) headers(method, name string) http.Header {
	hdr := m.hdr.Clone()
	hdr.Set(modern.HeaderMethod, method)
	if name != "" {
		hdr.Set(modern.HeaderName, name)
	}
	return hdr
}

func (m *Modern) send(ctx context.Context, hdr http.Header, method string, params []byte, h Hooks) (*Reply, error) {
	id := m.next.Add(1)
	return post(ctx, m.hc, m.url, hdr, envelope(id, method, params), id, h)
}

// Echo calls the demo's synchronous echo tool once and checks the answer.
type Echo func(ctx context.Context) error

// EchoParams are the tools/call params of every echo call.
const echoText = "bridgeload-echo"

var echoParams = []byte(`{"name":"echo","arguments":{"text":"` + echoText + `"}}`)

// LegacyEcho returns an Echo through a legacy session.
func LegacyEcho(l *Legacy) Echo {
	return func(ctx context.Context) error {
		r, err := l.Call(ctx, "tools/call", echoParams, Hooks{})
		return checkEcho(r, err)
	}
}

// ModernEcho returns an Echo made directly upstream.
func ModernEcho(m *Modern) Echo {
	params := WithMeta(echoParams)
	hdr := m.headers("tools/call", "echo")
	return func(ctx context.Context) error {
		r, err := m.send(ctx, hdr, "tools/call", params, Hooks{})
		return checkEcho(r, err)
	}
}

func checkEcho(r *Reply, err error) error {
	if err != nil {
		return err
	}
	if r.Err != nil {
		return fmt.Errorf("echo: %w", r.Err)
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != echoText {
		return fmt.Errorf("echo: unexpected result %.200s", r.Result)
	}
	return nil
}
