package metrics

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// Every label value is drawn from a fixed set below, or from the bounded
// client/version tables (clients.go). Anything else is folded into Other (or
// Unknown for eras), so no caller can put a task id, session id or secret into
// a label by mistake (docs/ARCHITECTURE.md, No secret or id in logs and
// labels).

// Other is the value of a label whose input is not in the label's known set,
// or is beyond a bound.
const Other = "other"

// Eras (labels era, client_era, upstream_era).
const (
	EraLegacy  = "legacy"  // 2025-11-25
	EraModern  = "modern"  // 2026-07-28 (+ io.modelcontextprotocol/tasks)
	EraUnknown = "unknown" // not determined yet (e.g. a parse error before detection)
)

// Outcomes (label outcome of tasksbridge_requests_total and
// tasksbridge_input_requests_total). OutcomeOf maps an error to one of these.
const (
	OutcomeOK                  = "ok"
	OutcomeToolError           = "tool_error" // a result with isError: true (JSON-RPC success)
	OutcomeParseError          = "parse_error"
	OutcomeInvalidRequest      = "invalid_request"
	OutcomeMethodNotFound      = "method_not_found"
	OutcomeInvalidParams       = "invalid_params"
	OutcomeInternal            = "internal"
	OutcomeResourceNotFound    = "resource_not_found"  // -32002 (legacy)
	OutcomeHeaderMismatch      = "header_mismatch"     // -32020
	OutcomeMissingCapability   = "missing_capability"  // -32021
	OutcomeUnsupportedVersion  = "unsupported_version" // -32022
	OutcomeUpstreamUnavailable = "upstream_unavailable"
	OutcomeUnauthorized        = "unauthorized" // the upstream's HTTP 401/403, relayed: the client must authorize
	OutcomeCancelled           = "cancelled"
	OutcomeTimeout             = "timeout"
	OutcomeError               = "error" // any other JSON-RPC error code
)

var outcomes = set(OutcomeOK, OutcomeToolError, OutcomeParseError, OutcomeInvalidRequest, OutcomeMethodNotFound,
	OutcomeInvalidParams, OutcomeInternal, OutcomeResourceNotFound, OutcomeHeaderMismatch, OutcomeMissingCapability,
	OutcomeUnsupportedVersion, OutcomeUpstreamUnavailable, OutcomeUnauthorized, OutcomeCancelled, OutcomeTimeout, OutcomeError)

// Outcomes returns the outcome label's value set (without Other).
func Outcomes() []string { return keys(outcomes) }

// temporary is implemented by upstream adapter errors (upstream/modern.Error)
// whose cause is an unreachable or failing upstream.
type temporary interface{ Temporary() bool }

func isTemporary(err error) bool {
	var t temporary
	return errors.As(err, &t) && t.Temporary()
}

// OutcomeOf maps err to an outcome: nil is ok; a cancelled or expired context
// is cancelled or timeout; an upstream adapter error that is Temporary() is
// upstream_unavailable; otherwise the JSON-RPC code of the first *rpc.Error in
// the chain (a non-JSON-RPC error counts as internal, as rpc.CodeOf does).
func OutcomeOf(err error) string {
	switch {
	case err == nil:
		return OutcomeOK
	case errors.Is(err, context.Canceled):
		return OutcomeCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimeout
	case isTemporary(err):
		return OutcomeUpstreamUnavailable
	}
	switch rpc.CodeOf(err) {
	case rpc.CodeParseError:
		return OutcomeParseError
	case rpc.CodeInvalidRequest:
		return OutcomeInvalidRequest
	case rpc.CodeMethodNotFound:
		return OutcomeMethodNotFound
	case rpc.CodeInvalidParams:
		return OutcomeInvalidParams
	case rpc.CodeInternalError:
		return OutcomeInternal
	case rpc.CodeLegacyResourceNotFound:
		return OutcomeResourceNotFound
	case rpc.CodeHeaderMismatch:
		return OutcomeHeaderMismatch
	case rpc.CodeMissingRequiredClientCapability:
		return OutcomeMissingCapability
	case rpc.CodeUnsupportedProtocolVersion:
		return OutcomeUnsupportedVersion
	}
	return OutcomeError
}

// Upstream code buckets (label code of tasksbridge_upstream_requests_total).
const (
	CodeOK          = "ok"
	CodeServerError = "server_error" // implementation-defined -32000..-32099 not listed below
	CodeTransport   = "transport"    // no JSON-RPC answer: unreachable, 5xx, broken stream, bad response
	CodeTimeout     = "timeout"
	CodeCancelled   = "cancelled"
	// The upstream answered, at the HTTP layer: it refused the request's
	// credentials (RFC 6750 §3). Not an outage; the client gets the refusal.
	CodeUnauthorized = "unauthorized" // HTTP 401
	CodeForbidden    = "forbidden"    // HTTP 403
	// The TLS handshake with the upstream failed (an untrusted or expired
	// certificate, a wrong host name, a protocol mismatch): a configuration
	// problem, not a flaky network.
	CodeTLS = "tls"
)

// JSON-RPC codes that get a label value of their own (their decimal text).
var knownCodes = []int64{rpc.CodeParseError, rpc.CodeInvalidRequest, rpc.CodeMethodNotFound, rpc.CodeInvalidParams,
	rpc.CodeInternalError, rpc.CodeLegacyResourceNotFound, rpc.CodeHeaderMismatch,
	rpc.CodeMissingRequiredClientCapability, rpc.CodeUnsupportedProtocolVersion}

var codes = func() map[string]bool {
	m := set(CodeOK, CodeServerError, CodeTransport, CodeTimeout, CodeCancelled, CodeUnauthorized, CodeForbidden, CodeTLS)
	for _, c := range knownCodes {
		m[strconv.FormatInt(c, 10)] = true
	}
	return m
}()

// Codes returns the code label's value set (without Other).
func Codes() []string { return keys(codes) }

// CodeBucket maps the error of an upstream call to a code label: nil is ok;
// context cancellation/expiry is cancelled/timeout; an HTTP 401/403 refusal
// (*oauthmeta.UpstreamAuthError) is unauthorized/forbidden; a failed TLS
// handshake or certificate check is tls; an adapter error that is
// Temporary() (unreachable, 5xx, 429, broken stream) is transport; a JSON-RPC
// error answer is its code for the well-known codes, server_error for the
// rest of -32000..-32099, other for anything else; a non-JSON-RPC error is
// transport.
func CodeBucket(err error) string {
	switch {
	case err == nil:
		return CodeOK
	case errors.Is(err, context.Canceled):
		return CodeCancelled
	case errors.Is(err, context.DeadlineExceeded):
		return CodeTimeout
	}
	if ae, ok := oauthmeta.AsUpstreamAuthError(err); ok {
		if ae.Status == http.StatusForbidden {
			return CodeForbidden
		}
		return CodeUnauthorized
	}
	if IsTLSFailure(err) {
		return CodeTLS
	}
	if isTemporary(err) {
		return CodeTransport
	}
	var e *rpc.Error
	if !errors.As(err, &e) || e == nil {
		return CodeTransport
	}
	for _, c := range knownCodes {
		if e.Code == c {
			return strconv.FormatInt(c, 10)
		}
	}
	if e.Code >= -32099 && e.Code <= -32000 {
		return CodeServerError
	}
	return Other
}

// Methods: the MCP method names (both eras) that get a label value of their
// own; any other method, including misspellings and vendor methods, is Other.
var methods = set(
	// lifecycle and utilities
	"initialize", "ping", "server/discover", "logging/setLevel", "completion/complete",
	// tools, resources, prompts
	"tools/list", "tools/call",
	"resources/list", "resources/read", "resources/templates/list", "resources/subscribe", "resources/unsubscribe",
	"prompts/list", "prompts/get",
	// tasks (both eras) and subscriptions
	"tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update", "subscriptions/listen",
	// server→client requests (input requests)
	"elicitation/create", "sampling/createMessage", "roots/list",
)

// Methods returns the method label's value set (without Other).
func Methods() []string { return keys(methods) }

// Method returns the method label value for an MCP method name.
func Method(name string) string { return oneOf(methods, name) }

// Task directions (label direction of tasksbridge_tasks_created_total):
// <client era>_to_<upstream era>.
const (
	DirectionLegacyToModern = "legacy_to_modern"
	DirectionModernToLegacy = "modern_to_legacy"
	DirectionLegacyToLegacy = "legacy_to_legacy"
	DirectionModernToModern = "modern_to_modern"
)

var directions = set(DirectionLegacyToModern, DirectionModernToLegacy, DirectionLegacyToLegacy, DirectionModernToModern)

// Direction returns the direction label for a client era and an upstream era.
func Direction(clientEra, upstreamEra string) string {
	return oneOf(directions, eraLabel(clientEra)+"_to_"+eraLabel(upstreamEra))
}

// Task origins (label origin of tasksbridge_tasks_created_total).
const (
	OriginUpstream    = "upstream"    // the upstream created the task
	OriginSynthesized = "synthesized" // the bridge wrapped a synchronous answer in an already completed task
)

var origins = set(OriginUpstream, OriginSynthesized)

// Task statuses (label status of tasksbridge_tasks_active): the five statuses
// both eras share.
var statuses = set("working", "input_required", "completed", "failed", "cancelled")

var eras = set(EraLegacy, EraModern, EraUnknown)

func eraLabel(s string) string {
	if eras[s] {
		return s
	}
	return EraUnknown
}

// Store operations (label op of tasksbridge_store_operations_total): the
// sessionmap.Store/Admin methods in snake_case. StoreOp also accepts the Go
// method names ("CreateTask").
var storeOps = set("create_session", "get_session", "touch_session", "delete_session",
	"create_task", "get_task", "update_status", "pin_cancel", "record_answered", "owe_answers", "settle_answers", "settle_upstream", "pending_upstream", "list_tasks",
	"delete_session_tasks", "all_sessions", "all_tasks", "lookup_session", "lookup_task", "gc", "open", "close")

// Store outcomes (label outcome of tasksbridge_store_operations_total).
const (
	StoreOK              = "ok"
	StoreNotFound        = "not_found"
	StoreExists          = "exists"
	StoreTerminal        = "terminal"
	StoreInvalidCursor   = "invalid_cursor"
	StoreInvalidArgument = "invalid_argument"
	StoreCancelled       = "cancelled" // the caller's context ended
	StoreError           = "error"     // anything else: I/O, corrupt, closed, locked, ...
)

var storeOutcomes = set(StoreOK, StoreNotFound, StoreExists, StoreTerminal, StoreInvalidCursor,
	StoreInvalidArgument, StoreCancelled, StoreError)

// StoreOutcome maps a sessionmap error to a store outcome label.
func StoreOutcome(err error) string {
	switch {
	case err == nil:
		return StoreOK
	case errors.Is(err, sessionmap.ErrNotFound):
		return StoreNotFound
	case errors.Is(err, sessionmap.ErrExists):
		return StoreExists
	case errors.Is(err, sessionmap.ErrTerminal):
		return StoreTerminal
	case errors.Is(err, sessionmap.ErrInvalidCursor):
		return StoreInvalidCursor
	case errors.Is(err, sessionmap.ErrInvalidArgument):
		return StoreInvalidArgument
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return StoreCancelled
	}
	return StoreError
}

// storeOp normalises "CreateTask", "createTask" and "create_task" alike.
func storeOp(op string) string {
	if storeOps[op] {
		return op
	}
	if len(op) > 64 {
		return Other
	}
	var b strings.Builder
	for i, r := range op {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return oneOf(storeOps, b.String())
}

func oneOf(s map[string]bool, v string) string {
	if s[v] {
		return v
	}
	return Other
}

func set(vs ...string) map[string]bool {
	m := make(map[string]bool, len(vs))
	for _, v := range vs {
		m[v] = true
	}
	return m
}

func keys(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}

// Limit values of tasksbridge_refused_total.
const (
	LimitSessions = "sessions"
	LimitTasks    = "tasks"
	LimitWaiters  = "waiters"
)

var limits = set(LimitSessions, LimitTasks, LimitWaiters)
