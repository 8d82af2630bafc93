package rpc

import (
	"encoding/json"
	"errors"
	"fmt"
)

// CodeLimitReached is the bridge's one code for "a limit refused this
// request; retry later": a new session beyond --max-sessions or beyond one
// principal's share of them, a call beyond --max-tasks-per-principal, a wait
// beyond --max-waiters-per-principal. It lies outside the JSON-RPC reserved
// block -32768..-32000 on purpose: 2026-07-28 forbids codes in
// -32020..-32099 that the spec does not define and discourages
// -32000..-32019 for new implementations (M-45), and JSON-RPC 2.0 leaves
// every code outside the reserved block to the application. The digits
// echo the HTTP status most such refusals carry (429).
const CodeLimitReached int64 = -31429

// Scopes of a limit: how many clients share it, which decides the HTTP
// status of the refusal (429 for one principal's limit, 503 for the
// process's).
const (
	LimitScopePrincipal = "principal"
	LimitScopeProcess   = "process"
)

// LimitData is the data of a CodeLimitReached error: which limit refused
// the request, whose limit it is, its value, and how many seconds to wait
// before retrying (the same as the HTTP Retry-After header).
type LimitData struct {
	Limit             string `json:"limit"`
	Scope             string `json:"scope"`
	Max               int    `json:"max"`
	RetryAfterSeconds int    `json:"retryAfterSeconds"`
}

// LimitError returns the CodeLimitReached error for a refusal by limit
// (scope LimitScopePrincipal or LimitScopeProcess, its value value).
func LimitError(limit, scope string, value, retryAfterSeconds int, format string, a ...any) *Error {
	return WithData(CodeLimitReached, fmt.Sprintf(format, a...),
		LimitData{Limit: limit, Scope: scope, Max: value, RetryAfterSeconds: max(retryAfterSeconds, 1)})
}

// LimitHTTP reports how an HTTP transport answers err when it is a
// CodeLimitReached refusal: the status (429 Too Many Requests for a
// per-principal limit, 503 Service Unavailable for a process-wide one) and
// the Retry-After seconds. ok is false for any other error.
func LimitHTTP(err error) (status, retryAfterSeconds int, ok bool) {
	var e *Error
	if !errors.As(err, &e) || e == nil || e.Code != CodeLimitReached {
		return 0, 0, false
	}
	var d LimitData
	_ = json.Unmarshal(e.Data, &d)
	// The numbers, not net/http's names: rpc is a pure package and imports
	// no I/O package (internal/archtest).
	status = 503 // Service Unavailable
	if d.Scope == LimitScopePrincipal {
		status = 429 // Too Many Requests
	}
	return status, max(d.RetryAfterSeconds, 1), true
}
