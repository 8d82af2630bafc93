package legacyup

import (
	"context"
	"net/http"

	"github.com/tasksbridge/tasksbridge/runtime/upcred"
)

// Forwarded credentials over time. A pooled session lives as long as its
// principal uses it, far longer than one access token: with
// Config.ForwardAuthorization and Config.Credentials, every request of the
// session carries the principal's freshest credential at send time (the
// keeper's, which every request of the principal updates, on this replica or
// through the store on another one), not the one the session was opened
// with. After a 401 the credential is marked refused and the request is
// sent once more with the next freshest, when there is one.

// observe hands the credential of one request of key's principal to the
// keeper (an unchanged one costs a compare).
func (p *Pool) observe(ctx context.Context, key, authorization string) {
	if p.cfg.Credentials == nil || !p.cfg.ForwardAuthorization || key == "" || authorization == "" {
		return
	}
	p.cfg.Credentials.Observe(ctx, key, authorization, upcred.ExpiryOf(authorization))
}

// freshAuth wraps next so that requests carry key's freshest credential
// (authorization when the keeper has none usable).
func (p *Pool) freshAuth(next http.RoundTripper, key, authorization string) http.RoundTripper {
	return credRT{next: next, keeper: p.cfg.Credentials, key: key, fallback: authorization}
}

type credRT struct {
	next     http.RoundTripper
	keeper   *upcred.Keeper
	key      string
	fallback string
}

func (t credRT) RoundTrip(r *http.Request) (*http.Response, error) {
	authz, ok := t.keeper.Current(r.Context(), t.key)
	if !ok {
		authz = t.fallback
	}
	resp, err := t.send(r, authz)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || authz == "" {
		return resp, err
	}
	t.keeper.Refused(t.key, authz)
	next, ok := t.keeper.Current(r.Context(), t.key)
	if !ok || next == authz || (r.Body != nil && r.Body != http.NoBody && r.GetBody == nil) {
		return resp, nil
	}
	retry := r.Clone(r.Context())
	if r.GetBody != nil {
		body, gerr := r.GetBody()
		if gerr != nil {
			return resp, nil
		}
		retry.Body = body
	}
	_ = resp.Body.Close()
	return t.send(retry, next)
}

func (t credRT) send(r *http.Request, authz string) (*http.Response, error) {
	r = r.Clone(r.Context())
	if authz != "" {
		r.Header.Set("Authorization", authz)
	}
	return t.next.RoundTrip(r)
}
