package oauthmeta

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type rpcBody struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int64         `json:"code"`
		Message string        `json:"message"`
		Data    authErrorData `json:"data"`
	} `json:"error"`
}

func decodeRPC(t *testing.T, rec *httptest.ResponseRecorder) rpcBody {
	t.Helper()
	var b rpcBody
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		t.Fatalf("body %q is not JSON: %v", rec.Body.String(), err)
	}
	return b
}

func TestWriteAuthError401(t *testing.T) {
	const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ"
	e := &UpstreamAuthError{Status: http.StatusUnauthorized, Method: "tools/call", Challenges: []string{
		`Bearer realm="mcp", error="invalid_token", error_description="token ` + jwt + ` expired", resource_metadata="https://up.internal/.well-known/oauth-protected-resource/mcp"`,
		`DPoP algs="ES256"`,
	}}
	rec := httptest.NewRecorder()
	WriteAuthError(rec, e, meta, json.RawMessage(`7`))
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("status = %d, want 401", rec.Code)
	}
	got := rec.Header().Values("WWW-Authenticate")
	want := []string{
		`Bearer realm="mcp", error="invalid_token", error_description="token ` + jwt + ` expired", resource_metadata="` + meta + `"`,
		`DPoP algs="ES256"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("WWW-Authenticate =\n%q\nwant\n%q", got, want)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	b := decodeRPC(t, rec)
	if b.JSONRPC != "2.0" || string(b.ID) != "7" || b.Error.Code != -32600 {
		t.Errorf("envelope = %+v", b)
	}
	if !strings.HasPrefix(b.Error.Message, "Unauthorized: the upstream requires authorization; follow WWW-Authenticate to obtain a token") ||
		!strings.Contains(b.Error.Message, `"invalid_token"`) {
		t.Errorf("message = %q", b.Error.Message)
	}
	if strings.Contains(rec.Body.String(), "eyJ") {
		t.Errorf("body echoes the token: %s", rec.Body.String())
	}
	if b.Error.Data.HTTPStatus != 401 || b.Error.Data.Error != "invalid_token" || b.Error.Data.ResourceMetadata != meta {
		t.Errorf("data = %+v", b.Error.Data)
	}
}

func TestWriteAuthError403InsufficientScope(t *testing.T) {
	e := &UpstreamAuthError{Status: http.StatusForbidden, Challenges: []string{
		`Bearer error="insufficient_scope", scope="files:read files:write", error_description="write access needed"`,
	}}
	rec := httptest.NewRecorder()
	WriteAuthError(rec, e, meta, json.RawMessage(`"req-1"`))
	if rec.Code != http.StatusForbidden {
		t.Fatalf("status = %d, want 403", rec.Code)
	}
	wantH := `Bearer error="insufficient_scope", scope="files:read files:write", error_description="write access needed", resource_metadata="` + meta + `"`
	if got := rec.Header().Get("WWW-Authenticate"); got != wantH {
		t.Errorf("WWW-Authenticate = %q\nwant %q", got, wantH)
	}
	b := decodeRPC(t, rec)
	if string(b.ID) != `"req-1"` {
		t.Errorf("id = %s", b.ID)
	}
	for _, s := range []string{"Forbidden: insufficient scope", `scope "files:read files:write"`, "write access needed"} {
		if !strings.Contains(b.Error.Message, s) {
			t.Errorf("message %q lacks %q", b.Error.Message, s)
		}
	}
	if b.Error.Data.Scope != "files:read files:write" {
		t.Errorf("data.scope = %q", b.Error.Data.Scope)
	}
}

func TestWriteAuthErrorWithoutChallenge(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteAuthError(rec, &UpstreamAuthError{Status: http.StatusUnauthorized}, meta, nil)
	if got := rec.Header().Get("WWW-Authenticate"); got != `Bearer resource_metadata="`+meta+`"` {
		t.Errorf("WWW-Authenticate = %q", got)
	}
	if b := decodeRPC(t, rec); string(b.ID) != "null" {
		t.Errorf("id = %s, want null", b.ID)
	}
	// A 403 without a challenge gets none invented; an odd id becomes null.
	rec = httptest.NewRecorder()
	WriteAuthError(rec, &UpstreamAuthError{Status: http.StatusForbidden}, meta, json.RawMessage(`{"x":1}`))
	if rec.Code != 403 || len(rec.Header().Values("WWW-Authenticate")) != 0 {
		t.Errorf("403: status %d, challenges %q", rec.Code, rec.Header().Values("WWW-Authenticate"))
	}
	if b := decodeRPC(t, rec); string(b.ID) != "null" || !strings.HasPrefix(b.Error.Message, "Forbidden:") {
		t.Errorf("403 body = %+v", b)
	}
	// A nil error is a plain 401 rather than a panic.
	rec = httptest.NewRecorder()
	WriteAuthError(rec, nil, "", nil)
	if rec.Code != 401 {
		t.Errorf("nil error: status %d", rec.Code)
	}
}

func TestWriteAuthErrorUnparsableRelayedAsSent(t *testing.T) {
	bad := `Bearer realm="unterminated`
	rec := httptest.NewRecorder()
	WriteAuthError(rec, &UpstreamAuthError{Status: 401, Challenges: []string{bad}}, meta, nil)
	if got := rec.Header().Get("WWW-Authenticate"); got != bad {
		t.Errorf("WWW-Authenticate = %q, want it as sent", got)
	}
}

func TestRedact(t *testing.T) {
	if got := redact("the token abcdefghijklmnopqrstuvwxyz0123 is bad\r\n"); got != "the token [redacted] is bad" {
		t.Errorf("redact = %q", got)
	}
	if got := redact(strings.Repeat("ab ", 200)); len(got) > maxDescription+len("…") {
		t.Errorf("redact did not bound the length: %d", len(got))
	}
}
