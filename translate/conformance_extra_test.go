package translate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// M-05: the bridge speaks exactly one modern revision towards a modern
// upstream, so an upstream -32022 (no mutually supported version) cannot be
// retried with another version: it is surfaced to the legacy client as a
// -32603 that says so, with the upstream's data.supported kept, on plain
// and task-augmented calls alike. (Choosing the era from data.supported
// when probing is upstream/modern's TestProbeEra.)
func TestUpstreamUnsupportedVersionSurfaced_M05(t *testing.T) {
	data := []byte(`{"supported":["2027-01-01"],"requested":"2026-07-28"}`)
	for _, taskAugmented := range []bool{false, true} {
		in := &rpc.Error{Code: rpc.CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version", Data: data}
		out := ErrorToLegacy("tools/call", taskAugmented, in)
		if out == nil || out.Code != rpc.CodeInternalError {
			t.Fatalf("task=%v: %+v, want -32603", taskAugmented, out)
		}
		if !strings.Contains(out.Message, "protocol version") || !bytes.Equal(out.Data, data) {
			t.Errorf("task=%v: message %q data %s: want the cause named and data.supported kept", taskAugmented, out.Message, out.Data)
		}
	}
}
