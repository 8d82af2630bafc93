package modernup

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Header names (case-insensitive on the wire; spellings of the specification).
const (
	headerMethod = "Mcp-Method"
	headerName   = "Mcp-Name"
)

// headerRoundTripper completes the Streamable HTTP request headers that go-sdk
// v1.8.0 leaves out (docs/ARCHITECTURE.md, What go-sdk v1.8.0 leaves to the
// bridge):
//
//   - Mcp-Name = params.taskId on tasks/get|update|cancel (M-32); go-sdk sets it
//     only for tools/call, prompts/get and resources/read.
//   - the =?base64?…?= encoding of Mcp-Name values that are not plain visible
//     ASCII or that look like the sentinel (M-10); go-sdk sends them raw.
//   - the per-call Authorization and extra headers (CallOptions), carried in the
//     request context so one shared http.Client serves every legacy principal.
//
// It also turns 5xx and 429 answers into a *statusError so the Client can tell
// an unavailable upstream (retryable) from a JSON-RPC answer.
type headerRoundTripper struct {
	next http.RoundTripper
}

func (t headerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	// A RoundTripper must not modify the caller's request: clone once, lazily.
	cloned := false
	clone := func() {
		if !cloned {
			r = r.Clone(r.Context())
			cloned = true
		}
	}
	if hc, ok := r.Context().Value(headerKey{}).(*callHeaders); ok && hc != nil {
		clone()
		if hc.authorization != "" {
			r.Header.Set("Authorization", hc.authorization)
		}
		for k, vs := range hc.extra {
			if protectedHeader(k) {
				continue // the body decides these; a caller cannot override them
			}
			r.Header.Del(k)
			for _, v := range vs {
				r.Header.Add(k, encodeHeaderValue(v))
			}
		}
	}
	if isTaskMethod(r.Header.Get(headerMethod)) && r.Header.Get(headerName) == "" && r.GetBody != nil {
		if id, ok := taskIDFromBody(r); ok {
			clone()
			r.Header.Set(headerName, id)
		}
	}
	if v := r.Header.Get(headerName); v != "" && needsBase64(v) {
		clone()
		r.Header.Set(headerName, encodeHeaderValue(v))
	}
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if ae := authRefusal(r, resp); ae != nil {
		return nil, ae // 401/403: relayed to the client, whatever the body
	}
	if resp.StatusCode < 400 {
		return resp, nil
	}
	// Classify every HTTP error here, where status and body are both known:
	// go-sdk drops the body of 5xx/429 answers, reports a 4xx without a
	// JSON-RPC body as a bare status text, and wraps its own sentinel
	// *jsonrpc.Error values (e.g. "rejected by transport") around failures,
	// so the Write error cannot be trusted to tell an upstream answer apart.
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	se := &statusError{code: resp.StatusCode, status: resp.Status}
	if msg, derr := jsonrpc.DecodeMessage(body); derr == nil {
		if res, ok := msg.(*jsonrpc.Response); ok {
			if we, ok := res.Error.(*jsonrpc.Error); ok {
				se.rpc = we
			}
		}
	}
	if se.rpc != nil && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
		// A 4xx with a JSON-RPC error (-32020/-32021/-32022/-32602/-32601…)
		// is the upstream's own answer to the request.
		return nil, &answerError{rpc: se.rpc}
	}
	return nil, se
}

// answerError carries a JSON-RPC error the upstream sent with an HTTP 4xx.
type answerError struct{ rpc *jsonrpc.Error }

func (e *answerError) Error() string { return e.rpc.Error() }

// CloseIdleConnections closes the idle connections of the wrapped transport
// (http.Client.CloseIdleConnections finds it through this method).
func (t headerRoundTripper) CloseIdleConnections() {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	if c, ok := next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// statusError is an HTTP 5xx/429 answer from the upstream.
type statusError struct {
	code   int
	status string
	rpc    *jsonrpc.Error // the JSON-RPC error in the body, if any
}

func (e *statusError) Error() string {
	if e.rpc != nil {
		return fmt.Sprintf("HTTP %s: %s (code %d)", e.status, e.rpc.Message, e.rpc.Code)
	}
	return "HTTP " + e.status
}

// protectedHeader reports the headers that mirror the body or belong to the
// transport; CallOptions.Header cannot set them.
func protectedHeader(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Mcp-Method", "Mcp-Name", "Mcp-Protocol-Version", "Mcp-Session-Id", "Content-Type", "Accept", "Content-Length", "Host":
		return true
	}
	return false
}

// isTaskMethod reports the extension methods whose Mcp-Name is params.taskId.
func isTaskMethod(m string) bool {
	return m == "tasks/get" || m == "tasks/update" || m == "tasks/cancel"
}

func taskIDFromBody(r *http.Request) (string, bool) {
	rc, err := r.GetBody()
	if err != nil {
		return "", false
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return "", false
	}
	var p struct {
		Params struct {
			TaskID string `json:"taskId"`
		} `json:"params"`
	}
	if json.Unmarshal(b, &p) != nil || p.Params.TaskID == "" {
		return "", false
	}
	return p.Params.TaskID, true
}

const (
	base64Prefix = "=?base64?"
	base64Suffix = "?="
)

// needsBase64 reports whether a header value must be sent as =?base64?…?=
// (core streamable-http, M-10): anything but plain visible ASCII and inner
// spaces, leading or trailing whitespace, and plain values that look like the
// sentinel themselves.
func needsBase64(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == ' ' || s[0] == '\t' || s[len(s)-1] == ' ' || s[len(s)-1] == '\t' {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7E {
			return true
		}
	}
	return strings.HasPrefix(s, base64Prefix) && strings.HasSuffix(s, base64Suffix)
}

// encodeHeaderValue returns v, base64-wrapped when needsBase64(v).
func encodeHeaderValue(v string) string {
	if !needsBase64(v) {
		return v
	}
	return base64Prefix + base64.StdEncoding.EncodeToString([]byte(v)) + base64Suffix
}

// decodeHeaderValue is the inverse of encodeHeaderValue (used by tests).
func decodeHeaderValue(v string) (string, error) {
	inner, ok := strings.CutPrefix(v, base64Prefix)
	if !ok {
		return v, nil
	}
	inner, ok = strings.CutSuffix(inner, base64Suffix)
	if !ok {
		return v, nil
	}
	b, err := base64.StdEncoding.DecodeString(inner)
	if err != nil {
		return "", fmt.Errorf("decode %q: %w", v, err)
	}
	return string(b), nil
}

// headerKey carries *callHeaders in a request context: go-sdk builds each POST
// with the context given to Connection.Write, so per-call values reach the
// RoundTripper without a per-call http.Client.
type headerKey struct{}

type callHeaders struct {
	authorization string
	extra         http.Header
}

func withCallHeaders(ctx context.Context, opts *CallOptions) context.Context {
	if opts == nil || (opts.Authorization == "" && len(opts.Header) == 0) {
		return ctx
	}
	return context.WithValue(ctx, headerKey{}, &callHeaders{authorization: opts.Authorization, extra: opts.Header})
}
