package oauthmeta

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// authErrorCode is the JSON-RPC code of the body WriteAuthError writes.
//
// An OAuth client acts on the HTTP status and the WWW-Authenticate header
// (RFC 6750 §3, RFC 9728 §5), never on this body; the body is for the person
// reading a log or a trace. No MCP revision defines a JSON-RPC code for an
// authorization failure, so the bridge defines none: it uses the standard
// "invalid request" code because the fault is the request's (its credentials
// are missing, invalid or short of a scope), not the server's. The internal
// error code would tell that person the bridge or upstream broke, and
// -32001, which some servers use for this, is the TypeScript SDK's
// "request timeout".
const authErrorCode = rpc.CodeInvalidRequest

// maxDescription bounds how much of the upstream's error_description the
// message repeats.
const maxDescription = 200

// tokenLike matches runs that may be a credential (a JWT, an opaque token,
// a base64 secret): an upstream that echoes the token it refused in its
// error_description must not make the bridge echo it too.
var tokenLike = regexp.MustCompile(`[A-Za-z0-9._~+/=-]{24,}`)

// redact returns an upstream's free text fit to repeat: token-like runs
// replaced, controls removed, length bounded.
func redact(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	s = tokenLike.ReplaceAllString(s, "[redacted]")
	if len(s) > maxDescription {
		s = strings.ToValidUTF8(s[:maxDescription], "") + "…"
	}
	return s
}

// cleanScope keeps only a scope value's RFC 6749 §3.3 scope-token characters.
func cleanScope(s string) string {
	fields := strings.Fields(s)
	out := fields[:0]
	for _, f := range fields {
		ok := true
		for i := 0; i < len(f); i++ {
			if c := f[i]; c < 0x21 || c == '"' || c == '\\' || c > 0x7e {
				ok = false
				break
			}
		}
		if ok && len(f) <= 128 {
			out = append(out, f)
		}
	}
	return redact(strings.Join(out, " "))
}

// authErrorData is the JSON-RPC error's data: what the upstream's Bearer
// challenge said, for programs that read the body anyway.
type authErrorData struct {
	HTTPStatus       int    `json:"httpStatus"`
	Error            string `json:"error,omitempty"`
	ErrorDescription string `json:"errorDescription,omitempty"`
	Scope            string `json:"scope,omitempty"`
	ResourceMetadata string `json:"resourceMetadata,omitempty"`
}

// RewriteChallenges returns challenges with every Bearer challenge's
// resource_metadata set to metadataURL (see RewriteChallenge), and the
// values it had to leave as sent because it could not parse them.
func RewriteChallenges(challenges []string, metadataURL string) (out []string, unparsed []string) {
	out = make([]string, 0, len(challenges))
	for _, c := range challenges {
		v, ok := RewriteChallenge(c, metadataURL)
		if !ok && metadataURL != "" {
			unparsed = append(unparsed, c)
		}
		out = append(out, v)
	}
	return out, unparsed
}

// WriteAuthError relays the upstream's refusal e to the client: the same
// HTTP status (401 or 403), every WWW-Authenticate challenge with its
// resource_metadata pointing at metadataURL (the bridge's own protected
// resource metadata, see MetadataURL), and a JSON-RPC error body for the
// request id (null when id is empty). A 401 that came without any challenge
// gets `Bearer resource_metadata="…"` (RFC 9110 §11.6.1 requires a
// challenge on 401; RFC 9728 §5.1 says where to find the metadata). An
// empty metadataURL relays the challenges as sent.
//
// The message repeats the challenge's error, error_description and scope
// so a person can act; it never contains a token (the upstream's text is
// redacted, and the client's request headers are never read here).
func WriteAuthError(w http.ResponseWriter, e *UpstreamAuthError, metadataURL string, id json.RawMessage) {
	status := http.StatusUnauthorized
	var challenges []string
	if e != nil {
		if e.Status == http.StatusForbidden {
			status = http.StatusForbidden
		}
		challenges = e.Challenges
	}
	out, _ := RewriteChallenges(challenges, metadataURL)
	if len(out) == 0 && status == http.StatusUnauthorized && metadataURL != "" {
		if q, ok := quoteString(metadataURL); ok {
			out = []string{"Bearer " + resourceMetadataParam + "=" + q}
		}
	}
	h := w.Header()
	h.Del("WWW-Authenticate")
	for _, c := range out {
		h.Add("WWW-Authenticate", c)
	}
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")

	data := authErrorData{HTTPStatus: status, ResourceMetadata: metadataURL}
	if v, ok := bearerParam(challenges, "error"); ok {
		data.Error = redact(v)
	}
	if v, ok := bearerParam(challenges, "error_description"); ok {
		data.ErrorDescription = redact(v)
	}
	if v, ok := bearerParam(challenges, "scope"); ok {
		data.Scope = cleanScope(v)
	}
	body := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *rpc.Error      `json:"error"`
	}{JSONRPC: "2.0", ID: validID(id), Error: rpc.WithData(authErrorCode, authMessage(data), data)}
	b, err := json.Marshal(body)
	if err != nil {
		// Unreachable: every member is a plain string or number.
		b = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":` + strconv.FormatInt(authErrorCode, 10) + `,"message":"Unauthorized"}}`)
	}
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// validID returns id when it is a JSON-RPC id (a string or a number), else null.
func validID(id json.RawMessage) json.RawMessage {
	t := strings.TrimSpace(string(id))
	if t == "" || !json.Valid([]byte(t)) || (t[0] != '"' && t[0] != '-' && (t[0] < '0' || t[0] > '9')) {
		return json.RawMessage("null")
	}
	return json.RawMessage(t)
}

// authMessage is the human-readable message of the relayed refusal.
func authMessage(d authErrorData) string {
	var b strings.Builder
	if d.HTTPStatus == http.StatusForbidden {
		if d.Error == "insufficient_scope" || d.Scope != "" {
			b.WriteString("Forbidden: insufficient scope; the upstream requires a token")
			if d.Scope != "" {
				b.WriteString(` with scope "` + d.Scope + `"`)
			}
			b.WriteString("; obtain one from the authorization server (follow WWW-Authenticate) and retry")
		} else {
			b.WriteString("Forbidden: the upstream refused the request with this token; follow WWW-Authenticate")
		}
	} else {
		b.WriteString("Unauthorized: the upstream requires authorization; follow WWW-Authenticate to obtain a token")
		if d.Scope != "" {
			b.WriteString(` with scope "` + d.Scope + `"`)
		}
	}
	if d.Error != "" {
		b.WriteString(` (upstream error "` + d.Error + `"`)
		if d.ErrorDescription != "" {
			b.WriteString(": " + d.ErrorDescription)
		}
		b.WriteString(")")
	}
	return b.String()
}
