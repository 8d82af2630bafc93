package translate

import (
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
// taskAugmented says whether the legacy client sent "task" on it.
//   - -32602 "not found" on resources/read → -32002, the 2025-11-25
//     resource-not-found code (modern-tasks §5.3; legacy clients expect it);
//   - -32021 MissingRequiredClientCapability (or the draft -32003 with
//     data.requiredCapabilities) → for a caller that did not send "task":
//     -32600 "Task augmentation required" (the legacy code for a request type
//     that needs a task, L-06; modern-tasks §5.1); for a task caller it can only
//     mean the bridge failed to declare a capability: -32603;
//     -32003 without that data has no defined meaning and becomes -32603
//     (the bridge never emits -32003);
//   - -32020 HeaderMismatch and -32022 UnsupportedProtocolVersion concern the
//     bridge's own upstream traffic, never the client: -32603 naming the cause
//     (L-66);
//   - everything else unchanged (code, message, data).
//
// Implements L-06, L-66, L-67.
func ErrorToLegacy(method string, taskAugmented bool, e *rpc.Error) *rpc.Error {
	if e == nil {
		return nil
	}
	switch {
	case e.Code == rpc.CodeInvalidParams && method == "resources/read" &&
		strings.Contains(strings.ToLower(e.Message), "not found"):
		return &rpc.Error{Code: rpc.CodeLegacyResourceNotFound, Message: e.Message, Data: e.Data}
	case e.Code == rpc.CodeMissingRequiredClientCapability || e.Code == modern.CodeDraftMissingCapability:
		if _, _, ok := modern.RequiredCapabilitiesOf(e); !ok && e.Code == modern.CodeDraftMissingCapability {
			// -32003 without the data has no defined meaning; the bridge never
			// emits -32003 (spec README fact 1).
			return internalErr("upstream %s failed with error -32003: %s", method, e.Message)
		}
		if taskAugmented {
			return internalErr("upstream requires a client capability the bridge did not declare on %s: %s", method, e.Message)
		}
		out := legacy.TaskAugmentationRequiredError(method)
		out.Data = e.Data
		return out
	case e.Code == rpc.CodeHeaderMismatch:
		return internalErr("bridge and upstream disagree on request headers: %s", e.Message)
	case e.Code == rpc.CodeUnsupportedProtocolVersion:
		return internalErr("upstream does not support the bridge's protocol version: %s", e.Message)
	}
	return e
}

// ErrorToModern maps a JSON-RPC error from a legacy upstream to what a modern
// client should see. A 2026-07-28 implementation must never emit -32002 or
// -32042 nor any code in -32020..-32099 that the spec does not define (M-45):
//   - -32002 resource not found → -32602 (modern-tasks §3.5), message and data
//     kept;
//   - -32042 URL elicitation required → -32603 (2026 expresses it through
//     MRTR; a face that can, should ask instead of failing);
//   - any code in -32020..-32099 from a legacy peer (it has no 2026 meaning
//     there; -32003 never leaves the bridge either) → -32603;
//   - everything else unchanged.
//
// Implements M-45, M-62.
func ErrorToModern(method string, e *rpc.Error) *rpc.Error {
	if e == nil {
		return nil
	}
	switch {
	case e.Code == rpc.CodeLegacyResourceNotFound:
		return &rpc.Error{Code: rpc.CodeInvalidParams, Message: e.Message, Data: e.Data}
	case e.Code == codeURLElicitationRequired:
		return &rpc.Error{Code: rpc.CodeInternalError, Message: "upstream requires a URL elicitation: " + e.Message, Data: e.Data}
	case e.Code == modern.CodeDraftMissingCapability || (e.Code <= -32020 && e.Code >= -32099):
		return internalErr("upstream %s failed with legacy error %d: %s", method, e.Code, e.Message)
	}
	return e
}
