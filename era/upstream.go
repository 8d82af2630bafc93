package era

import (
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Probe is the outcome of one server/discover probe of an upstream, as the
// upstream client saw it; the client sends the probe, Upstream decides.
// Exactly one of Result, Error, Unreachable and Silent describes it; none
// set is an answer that was neither (an HTTP error without a JSON-RPC body,
// a result that is not a DiscoverResult).
type Probe struct {
	// Result is the DiscoverResult the upstream answered.
	Result *modern.DiscoverResult
	// Error is the JSON-RPC error the upstream answered (in a 4xx body
	// too: M-07).
	Error *rpc.Error
	// Unreachable: no answer that speaks for the upstream's MCP era — a
	// transport failure, a cancelled probe, or an HTTP 401/403 (the
	// upstream's HTTP layer refusing the probe's credentials; the probe is
	// repeated with a request's credentials).
	Unreachable bool
	// Silent: on stdio, no answer before the probe's deadline (a legacy
	// server may ignore an unknown method, M-06).
	Silent bool
}

// Upstream decides an upstream's era from its probe (M-06, M-07):
//
//   - unreachable: Unknown (nothing is decided; the caller probes again);
//   - a DiscoverResult: the era of its tasks (Tasks);
//   - -32022 whose data.supported names no modern revision: legacy (a
//     modern error, but it names what the server does speak); any other
//     -32022, -32020 or -32021: modern (M-07: a recognised modern error
//     means do not fall back to initialize);
//   - anything else — another JSON-RPC error, an answer that is neither,
//     silence on stdio: legacy, whose sessions open with initialize.
//
// The decision never rests on one particular error code.
func Upstream(p Probe) Era {
	switch {
	case p.Unreachable:
		return Unknown
	case p.Result != nil:
		return Tasks(p.Result)
	case p.Error != nil && p.Error.Code == rpc.CodeUnsupportedProtocolVersion:
		if d, ok := modern.UnsupportedVersionOf(p.Error); ok && !anyModern(d.Supported) {
			return Legacy
		}
		return Modern
	case p.Error != nil && (p.Error.Code == rpc.CodeHeaderMismatch || p.Error.Code == rpc.CodeMissingRequiredClientCapability):
		return Modern
	}
	return Legacy
}

// Tasks is the era of a DiscoverResult's tasks. A server that speaks no
// modern revision is legacy. A server that speaks 2026-07-28 but advertises
// the 2025-11-25 capabilities.tasks and not the io.modelcontextprotocol/tasks
// extension (mcp-go v1.2.1 does) keeps the legacy task shapes on modern
// requests too — a task param, nested CreateTaskResult, tasks/get in the v1
// shape, -32601 for a required tool called without "task" — which the
// extension forbids (M-66: no legacy tasks capability under a version that
// includes the extension); its tasks need the modern face, so it is legacy
// here, and the bridge speaks 2025-11-25 to it (it accepts initialize). A
// modern server with the extension, or with no tasks at all, is modern.
func Tasks(d *modern.DiscoverResult) Era {
	if d == nil || !anyModern(d.SupportedVersions) {
		return Legacy // answers discover but speaks no modern revision
	}
	if _, legacyTasks := d.Capabilities.Extra["tasks"]; legacyTasks && !d.Capabilities.HasTasksExtension() {
		return Legacy
	}
	return Modern
}

// anyModern reports whether a version list holds a per-request-_meta
// revision (2026-07-28 or later; revisions are dates and sort as such).
func anyModern(versions []string) bool {
	for _, v := range versions {
		if v >= modern.ProtocolVersion {
			return true
		}
	}
	return false
}
