package legacyup

import (
	"errors"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// ErrUnauthorized matches errors for requests the upstream refused at the
// HTTP layer with 401 or 403 (missing, invalid or expired credentials, or a
// scope short). The chain holds the *oauthmeta.UpstreamAuthError with the
// upstream's challenges, which the modern face relays to its client as the
// same HTTP status (RFC 6750 §3). The session itself is not ended: the same
// principal with fresh credentials may use it again.
var ErrUnauthorized = errors.New("legacy upstream refused the request's authorization")

// Unauthorized reports whether err is an upstream 401 or 403.
func Unauthorized(err error) bool {
	_, ok := oauthmeta.AsUpstreamAuthError(err)
	return ok
}

// unauthorized is the error of a refused request: a -32603 naming the
// authorization plainly, matching ErrUnauthorized, with ae in its chain.
func unauthorized(target string, ae *oauthmeta.UpstreamAuthError) *Error {
	what := "the request's authorization is missing, invalid or expired"
	if ae.Status == http.StatusForbidden {
		what = "the request's authorization does not allow it (insufficient scope)"
	}
	method := ae.Method
	if method == "" {
		method = "the request"
	}
	return &Error{
		RPC:   rpc.Errorf(rpc.CodeInternalError, "legacy upstream %s refused %s with HTTP %d %s: %s", target, method, ae.Status, http.StatusText(ae.Status), what),
		Kind:  ErrUnauthorized,
		Cause: ae,
	}
}

// methodOf names a message for a refusal's log.
func methodOf(msg jsonrpc.Message) string {
	if r, ok := msg.(*jsonrpc.Request); ok {
		return r.Method
	}
	return ""
}

// authCatch sits under go-sdk's client transport while a session
// initializes: go-sdk reports a 401/403 to initialize as a bare status
// text, so the refusal (status and challenges) is kept here and the pool
// returns it instead.
type authCatch struct {
	next http.RoundTripper

	mu  sync.Mutex
	got *oauthmeta.UpstreamAuthError
}

func (t *authCatch) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err == nil {
		if ae := oauthmeta.FromResponse(resp, legacy.MethodInitialize); ae != nil {
			t.mu.Lock()
			if t.got == nil {
				t.got = ae
			}
			t.mu.Unlock()
		}
	}
	return resp, err
}

// refusal returns the first refusal seen, or nil (also for a nil t: a
// stdio upstream has no HTTP layer).
func (t *authCatch) refusal() *oauthmeta.UpstreamAuthError {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.got
}
