package modern

import (
	"fmt"
	"strings"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// Error constructors for the 2026-07-28 era. Every one returns a *rpc.Error
// whose message tells the reader what to change. None emits -32003 (the draft
// number of MissingRequiredClientCapability, now -32021) or any other code
// in -32000..-32019 (M-45).

// CodeDraftMissingCapability is -32003, the pre-release number of
// MissingRequiredClientCapability. It has no meaning in 2026-07-28 and is
// never emitted; RequiredCapabilitiesOf recognises it on input only.
const CodeDraftMissingCapability int64 = -32003

// MissingCapabilityData is data of a -32021 error.
type MissingCapabilityData struct {
	RequiredCapabilities ClientCapabilities `json:"requiredCapabilities"`
}

// ErrMissingRequiredClientCapability is -32021 with the required
// data.requiredCapabilities (M-39). what says which part of the request needs
// the capability (e.g. "tasks/get").
func ErrMissingRequiredClientCapability(required ClientCapabilities, what string) *rpc.Error {
	b, err := required.MarshalJSON()
	if err != nil {
		b = []byte("{}")
	}
	msg := fmt.Sprintf("Missing required client capability: %s needs %s declared in params._meta[%q] on this request (capabilities are not remembered between requests)",
		what, string(b), MetaKeyClientCapabilities)
	return rpc.WithData(rpc.CodeMissingRequiredClientCapability, msg, MissingCapabilityData{RequiredCapabilities: required})
}

// ErrTasksExtensionRequired is -32021 for a request that needs the tasks
// extension but did not declare it: tasks/get|update|cancel, a
// subscriptions/listen asking for taskIds, or a tools/call that can only run as
// a task (M-51, M-61). data.requiredCapabilities is
// {"extensions":{"io.modelcontextprotocol/tasks":{}}}.
func ErrTasksExtensionRequired(method string) *rpc.Error {
	caps := TasksCapabilities()
	msg := fmt.Sprintf(`Missing required client capability: %s requires the %s extension; add "extensions": {%q: {}} to params._meta[%q] on this request (capabilities are not remembered between requests)`,
		method, TasksExtensionID, TasksExtensionID, MetaKeyClientCapabilities)
	return rpc.WithData(rpc.CodeMissingRequiredClientCapability, msg, MissingCapabilityData{RequiredCapabilities: caps})
}

// RequiredCapabilitiesOf extracts data.requiredCapabilities from a -32021
// error. A -32003 carrying the same data (a non-conforming pre-release server,
// M-45) is recognised too and reported with draft = true.
func RequiredCapabilitiesOf(e *rpc.Error) (caps ClientCapabilities, draft bool, ok bool) {
	if e == nil || (e.Code != rpc.CodeMissingRequiredClientCapability && e.Code != CodeDraftMissingCapability) || isNull(e.Data) {
		return ClientCapabilities{}, false, false
	}
	r, err := topReader("error data", e.Data)
	if err != nil || !r.has("requiredCapabilities") {
		return ClientCapabilities{}, false, false
	}
	c, err := r.child("requiredCapabilities")
	if err != nil {
		return ClientCapabilities{}, false, false
	}
	caps, err = readClientCaps(c)
	if err != nil {
		return ClientCapabilities{}, false, false
	}
	return caps, e.Code == CodeDraftMissingCapability, true
}

// UnsupportedVersionData is data of a -32022 error.
type UnsupportedVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}

// ErrUnsupportedProtocolVersion is -32022 with data {supported, requested} (M-38).
func ErrUnsupportedProtocolVersion(requested string, supported []string) *rpc.Error {
	if supported == nil {
		supported = []string{}
	}
	req := requested
	if req == "" {
		req = "(none)"
	}
	msg := fmt.Sprintf("Unsupported protocol version %q: this server supports %s; retry with one of them in params._meta[%q] and the %s header",
		req, quoteList(supported), MetaKeyProtocolVersion, HeaderProtocolVersion)
	return rpc.WithData(rpc.CodeUnsupportedProtocolVersion, msg, UnsupportedVersionData{Supported: supported, Requested: requested})
}

// UnsupportedVersionOf extracts data of a -32022 error (M-05).
func UnsupportedVersionOf(e *rpc.Error) (UnsupportedVersionData, bool) {
	if e == nil || e.Code != rpc.CodeUnsupportedProtocolVersion || isNull(e.Data) {
		return UnsupportedVersionData{}, false
	}
	r, err := topReader("error data", e.Data)
	if err != nil {
		return UnsupportedVersionData{}, false
	}
	sup, err := r.strList("supported")
	if err != nil {
		return UnsupportedVersionData{}, false
	}
	req, _, err := r.str("requested")
	if err != nil {
		return UnsupportedVersionData{}, false
	}
	return UnsupportedVersionData{Supported: sup, Requested: req}, true
}

func quoteList(list []string) string {
	if len(list) == 0 {
		return "no versions"
	}
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// ErrHeaderMismatch is -32020: header carries headerValue but the body says
// bodyValue (M-43, M-67). Values are shown decoded.
func ErrHeaderMismatch(header, headerValue, bodyValue string) *rpc.Error {
	return rpc.Errorf(rpc.CodeHeaderMismatch,
		"Header mismatch: %s header value %s does not match body value %s; send the header with the value from the request body",
		header, quoteShort(headerValue), quoteShort(bodyValue))
}

// ErrHeaderMissing is -32020 for a required header that is absent; bodyValue
// is the value it must carry.
func ErrHeaderMissing(header, bodyValue string) *rpc.Error {
	if bodyValue == "" {
		return rpc.Errorf(rpc.CodeHeaderMismatch, "Header mismatch: required %s header is missing", header)
	}
	return rpc.Errorf(rpc.CodeHeaderMismatch,
		"Header mismatch: required %s header is missing; set it to %s (the value from the request body)",
		header, quoteShort(bodyValue))
}

// ErrHeaderInvalid is -32020 for a header value that cannot be read (invalid
// characters or a broken =?base64?…?= encoding).
func ErrHeaderInvalid(header, value, reason string) *rpc.Error {
	return rpc.Errorf(rpc.CodeHeaderMismatch, "Header mismatch: %s header value %s is malformed: %s", header, quoteShort(value), reason)
}

// quoteShort quotes s for a message, cutting very long values.
func quoteShort(s string) string {
	const max = 200
	if len(s) > max {
		return fmt.Sprintf("%q…", s[:max])
	}
	return fmt.Sprintf("%q", s)
}

// ErrTaskNotFound is -32602 for a taskId that is unknown, expired, purged or
// owned by another principal. The text is the same in every case so that
// existence does not leak (M-60, M-65; docs/ARCHITECTURE.md, A foreign id
// answers like an unknown one).
func ErrTaskNotFound(taskID string) *rpc.Error {
	return rpc.Errorf(rpc.CodeInvalidParams,
		"Task not found: no task %s is available to this caller (it may never have existed or may have expired); create a new task with tools/call",
		quoteShort(taskID))
}

// ErrMethodNotFound is -32601 for an unknown method (M-42; HTTP 404). The two
// methods removed by 2026-07-28 + io.modelcontextprotocol/tasks get a message
// saying so (M-34, M-66).
func ErrMethodNotFound(method string) *rpc.Error {
	switch method {
	case MethodTasksResult:
		return rpc.Errorf(rpc.CodeMethodNotFound,
			"Method not found: %q was removed in MCP %s (%s): call tasks/get, which returns the result, error or input requests inline",
			method, ProtocolVersion, TasksExtensionID)
	case MethodTasksList:
		return rpc.Errorf(rpc.CodeMethodNotFound,
			"Method not found: %q was removed in MCP %s (%s) and has no replacement: keep the taskId from each CreateTaskResult and call tasks/get",
			method, ProtocolVersion, TasksExtensionID)
	case "initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe":
		return rpc.Errorf(rpc.CodeMethodNotFound,
			"Method not found: %q does not exist in MCP %s (no initialize handshake or sessions; see server/discover and per-request _meta)",
			method, ProtocolVersion)
	}
	return rpc.Errorf(rpc.CodeMethodNotFound, "Method not found: %q", method)
}
