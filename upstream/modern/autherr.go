package modernup

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// ErrUnauthorized matches errors for requests the upstream refused at the
// HTTP layer with 401 or 403: the request's credentials are missing,
// invalid, expired or short of a scope. The error chain holds the
// *oauthmeta.UpstreamAuthError with the upstream's challenges, which a face
// relays to its client as the same HTTP status (RFC 6750 §3, RFC 9728 §5.1).
// Retrying with the same credentials will not help; it says nothing about
// the upstream's era.
var ErrUnauthorized = errors.New("upstream refused the request's authorization")

// Unauthorized reports whether err is an upstream 401 or 403.
func Unauthorized(err error) bool {
	_, ok := oauthmeta.AsUpstreamAuthError(err)
	return ok
}

// authRefusal returns the refusal a 401 or 403 response carries (its body
// drained and closed), or nil for any other response. Every HTTP error is
// classified in headerRoundTripper, where status and headers are both known.
func authRefusal(r *http.Request, resp *http.Response) error {
	ae := oauthmeta.FromResponse(resp, requestMethod(r))
	if ae == nil {
		return nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return ae
}

// requestMethod is the JSON-RPC method of an upstream POST, for logs: the
// Mcp-Method header, or the body's method.
func requestMethod(r *http.Request) string {
	if m := r.Header.Get(headerMethod); m != "" {
		return m
	}
	if r.GetBody == nil {
		return ""
	}
	rc, err := r.GetBody()
	if err != nil {
		return ""
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	if err != nil {
		return ""
	}
	var p struct {
		Method string `json:"method"`
	}
	_ = json.NewDecoder(bytes.NewReader(b)).Decode(&p)
	return p.Method
}

// unauthorized is the Client's error for an upstream refusal: a -32603
// naming the authorization plainly (for a client whose response already
// started), matching ErrUnauthorized, with the refusal in its chain.
func (c *Client) unauthorized(method string, ae *oauthmeta.UpstreamAuthError) error {
	what := "the request's authorization is missing, invalid or expired"
	if ae.Status == http.StatusForbidden {
		what = "the request's authorization does not allow it (insufficient scope)"
	}
	return &Error{
		RPC:   rpc.Errorf(rpc.CodeInternalError, "upstream %s refused %s with HTTP %d %s: %s", c.Target, method, ae.Status, http.StatusText(ae.Status), what),
		Kind:  ErrUnauthorized,
		Cause: ae,
	}
}
