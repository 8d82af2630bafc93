// Package oauthmeta makes OAuth discovery work through the bridge: it serves
// the upstream's protected resource metadata (RFC 9728) at the bridge's own
// well-known URIs with `resource` rewritten to the URL the client dialed,
// proxies the 2025-03-26-era authorization server endpoints, and rewrites the
// resource_metadata parameter of relayed WWW-Authenticate challenges so they
// point at the bridge.
package oauthmeta

import (
	"errors"
	"fmt"
	"net/http"
)

// UpstreamAuthError is an upstream's refusal at the HTTP layer (401 or
// 403). The bridge relays it to the client as the same HTTP status with the
// same challenges (rewritten to point at the bridge), never as HTTP 200 with
// a JSON-RPC error: that is what starts an OAuth client's flow.
type UpstreamAuthError struct {
	// Status is the upstream's HTTP status (401 or 403).
	Status int
	// Challenges are the upstream's WWW-Authenticate values, as sent.
	Challenges []string
	// Method is the upstream request that was refused (for logs).
	Method string
}

func (e *UpstreamAuthError) Error() string {
	return fmt.Sprintf("the upstream refused %s with HTTP %d %s", e.Method, e.Status, http.StatusText(e.Status))
}

// AsUpstreamAuthError reports whether err's chain holds an upstream auth refusal.
func AsUpstreamAuthError(err error) (*UpstreamAuthError, bool) {
	var e *UpstreamAuthError
	ok := errors.As(err, &e)
	return e, ok
}

// FromResponse returns the refusal resp carries, or nil when resp is not a
// 401 or 403.
func FromResponse(resp *http.Response, method string) *UpstreamAuthError {
	if resp == nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return nil
	}
	return &UpstreamAuthError{Status: resp.StatusCode, Challenges: resp.Header.Values("WWW-Authenticate"), Method: method}
}
