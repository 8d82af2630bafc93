package translate

import (
	"fmt"
	"strings"

	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// codeURLElicitationRequired is the 2025-11-25 URLElicitationRequiredError
// code, which 2026-07-28 implementations must not emit (M-45).
const codeURLElicitationRequired int64 = -32042

// ErrorToLegacy maps a JSON-RPC error from a modern upstream to what a legacy
// client of the same request should see. method is the request's method;
// taskAugmented says whether the legacy client sent "task" on it. data is
// kept in every case (error data survives translation).
//   - -32602 "not found" on resources/read → -32002, the 2025-11-25
//     resource-not-found code (legacy clients expect it);
//   - -32021 MissingRequiredClientCapability (or the draft -32003 with
//     data.requiredCapabilities; the bridge never emits -32003):
//   - requiring the tasks extension (or not saying what it requires): for
//     a caller that did not send "task", -32600 "Task augmentation required"
//     (the legacy code for a request type that needs a task, L-06); for a
//     task caller it can only mean the bridge
//     failed to declare the extension it always declares: -32603;
//   - requiring anything else (elicitation, sampling, roots, ...): the bridge
//     declares upstream exactly what the legacy client declared at
//     initialize (UpstreamRequestMeta), so the client lacks it: -32600
//     naming the capabilities to declare (L-67), whether or not "task" was
//     sent;
//   - -32003 without that data has no defined meaning: -32603;
//   - -32020 HeaderMismatch and -32022 UnsupportedProtocolVersion concern the
//     bridge's own upstream traffic, never the client: -32603 naming the cause
//     (L-66);
//   - everything else unchanged (code, message, data); an empty message is
//     replaced by one naming the method and code (L-67).
//
// Implements L-06, L-66, L-67.
func ErrorToLegacy(method string, taskAugmented bool, e *rpc.Error) *rpc.Error {
	if e == nil {
		return nil
	}
	e = withMessage(method, e)
	switch {
	case e.Code == rpc.CodeInvalidParams && method == "resources/read" &&
		strings.Contains(strings.ToLower(e.Message), "not found"):
		return &rpc.Error{Code: rpc.CodeLegacyResourceNotFound, Message: e.Message, Data: e.Data}
	case e.Code == rpc.CodeMissingRequiredClientCapability || e.Code == modern.CodeDraftMissingCapability:
		caps, _, ok := modern.RequiredCapabilitiesOf(e)
		switch {
		case !ok && e.Code == modern.CodeDraftMissingCapability:
			// -32003 without the data has no defined meaning; the bridge never
			// emits -32003 (M-45: its final number is -32021).
			return internalData(e.Data, "upstream %s failed with error -32003: %s", method, e.Message)
		case ok && !caps.HasTasksExtension():
			return &rpc.Error{Code: rpc.CodeInvalidRequest, Data: e.Data, Message: fmt.Sprintf(
				"%s needs client capabilities this client did not declare at initialize: %s; reconnect declaring them in initialize params.capabilities",
				method, capabilitiesText(caps))}
		case taskAugmented:
			return internalData(e.Data, "upstream requires the %s extension on %s, which the bridge failed to declare: %s", modern.TasksExtensionID, method, e.Message)
		}
		out := legacy.TaskAugmentationRequiredError(method)
		out.Data = e.Data
		return out
	case e.Code == rpc.CodeHeaderMismatch:
		return internalData(e.Data, "bridge and upstream disagree on request headers: %s", e.Message)
	case e.Code == rpc.CodeUnsupportedProtocolVersion:
		return internalData(e.Data, "upstream does not support the bridge's protocol version: %s", e.Message)
	}
	return e
}

// withMessage returns e, or a copy with a message saying what failed when the
// upstream sent none: an error a client shows must say something (L-67, M-62).
func withMessage(method string, e *rpc.Error) *rpc.Error {
	if strings.TrimSpace(e.Message) != "" {
		return e
	}
	return &rpc.Error{Code: e.Code, Data: e.Data,
		Message: fmt.Sprintf("upstream %s failed with error %d and no message", method, e.Code)}
}

// capabilitiesText renders required capabilities for a message: their JSON,
// bounded in length.
func capabilitiesText(c modern.ClientCapabilities) string {
	b, err := c.MarshalJSON()
	if err != nil {
		return "(unreadable)"
	}
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// internalData is a -32603 that keeps the original error's data.
func internalData(data []byte, format string, a ...any) *rpc.Error {
	e := internalErr(format, a...)
	e.Data = data
	return e
}

// ErrorToModern maps a JSON-RPC error from a legacy upstream to what a modern
// client should see. A 2026-07-28 implementation must never emit -32002 or
// -32042 nor any code in -32020..-32099 that the spec does not define (M-45):
//   - -32002 resource not found → -32602 (M-45: 2026 servers must not emit
//     -32002), message and data
//     kept;
//   - -32042 URL elicitation required → -32603 (2026 expresses it through
//     MRTR; a face that can, should ask instead of failing);
//   - any code in -32020..-32099 from a legacy peer (it has no 2026 meaning
//     there; -32003 never leaves the bridge either) → -32603;
//   - everything else unchanged (an application-defined code stays); an
//     empty message is replaced by one naming the method and code (M-62).
//
// data is kept in every case.
//
// Implements M-45, M-62.
func ErrorToModern(method string, e *rpc.Error) *rpc.Error {
	if e == nil {
		return nil
	}
	e = withMessage(method, e)
	switch {
	case e.Code == rpc.CodeLegacyResourceNotFound:
		return &rpc.Error{Code: rpc.CodeInvalidParams, Message: e.Message, Data: e.Data}
	case e.Code == codeURLElicitationRequired:
		return &rpc.Error{Code: rpc.CodeInternalError, Message: "upstream requires a URL elicitation: " + e.Message, Data: e.Data}
	case e.Code == modern.CodeDraftMissingCapability || (e.Code <= -32020 && e.Code >= -32099):
		return internalData(e.Data, "upstream %s failed with legacy error %d: %s", method, e.Code, e.Message)
	}
	return e
}
