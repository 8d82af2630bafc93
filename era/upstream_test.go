package era_test

import (
	"encoding/json"
	"testing"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

func discover(t *testing.T, versions, caps string) *modern.DiscoverResult {
	t.Helper()
	var d modern.DiscoverResult
	if err := json.Unmarshal([]byte(`{"resultType":"complete","supportedVersions":`+versions+`,"capabilities":{`+caps+`}}`), &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

func rpcErr(t *testing.T, code int64, data string) *rpc.Error {
	t.Helper()
	e := &rpc.Error{Code: code, Message: "x"}
	if data != "" {
		e.Data = json.RawMessage(data)
	}
	return e
}

// The upstream's era from every kind of probe outcome (M-06, M-07, M-66).
func TestUpstreamTable(t *testing.T) {
	const both = `["2026-07-28","2025-11-25"]`
	for _, tc := range []struct {
		name string
		p    era.Probe
		want era.Era
	}{
		{"unreachable", era.Probe{Unreachable: true}, era.Unknown},
		{"unreachable wins over an error", era.Probe{Unreachable: true, Error: rpcErr(t, rpc.CodeHeaderMismatch, "")}, era.Unknown},
		{"silent on stdio", era.Probe{Silent: true}, era.Legacy},
		{"neither result nor error", era.Probe{}, era.Legacy},
		{"discover, tasks extension", era.Probe{Result: discover(t, both, `"extensions":{"io.modelcontextprotocol/tasks":{}}`)}, era.Modern},
		{"discover, no tasks", era.Probe{Result: discover(t, both, `"tools":{}`)}, era.Modern},
		{"discover, legacy tasks only", era.Probe{Result: discover(t, both, `"tasks":{"list":{}}`)}, era.Legacy},
		{"discover, both task kinds", era.Probe{Result: discover(t, both, `"tasks":{"list":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}`)}, era.Modern},
		{"discover, only old revisions", era.Probe{Result: discover(t, `["2025-11-25"]`, `"extensions":{"io.modelcontextprotocol/tasks":{}}`)}, era.Legacy},
		{"discover, a later revision", era.Probe{Result: discover(t, `["2027-03-01"]`, ``)}, era.Modern},
		{"-32601", era.Probe{Error: rpcErr(t, -32601, "")}, era.Legacy},
		{"-32602", era.Probe{Error: rpcErr(t, -32602, "")}, era.Legacy},
		{"-32600", era.Probe{Error: rpcErr(t, -32600, "")}, era.Legacy},
		{"-32020", era.Probe{Error: rpcErr(t, rpc.CodeHeaderMismatch, "")}, era.Modern},
		{"-32021", era.Probe{Error: rpcErr(t, rpc.CodeMissingRequiredClientCapability, `{"requiredCapabilities":{}}`)}, era.Modern},
		{"-32022 naming a modern revision", era.Probe{Error: rpcErr(t, rpc.CodeUnsupportedProtocolVersion, `{"supported":["2026-07-28"],"requested":"2099-01-01"}`)}, era.Modern},
		{"-32022 naming only legacy revisions", era.Probe{Error: rpcErr(t, rpc.CodeUnsupportedProtocolVersion, `{"supported":["2025-11-25"],"requested":"2026-07-28"}`)}, era.Legacy},
		{"-32022 without data", era.Probe{Error: rpcErr(t, rpc.CodeUnsupportedProtocolVersion, "")}, era.Modern},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := era.Upstream(tc.p); got != tc.want {
				t.Fatalf("Upstream = %v, want %v", got, tc.want)
			}
		})
	}
	if got := era.Tasks(nil); got != era.Legacy {
		t.Errorf("Tasks(nil) = %v, want legacy", got)
	}
}

// An era is its record text; Unknown is never a valid record value.
func TestEraText(t *testing.T) {
	for s, want := range map[string]era.Era{"legacy": era.Legacy, "modern": era.Modern} {
		if got, ok := era.Parse(s); !ok || got != want || got.String() != s {
			t.Errorf("Parse(%q) = %v, %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "unknown", "Legacy", "2026-07-28"} {
		if got, ok := era.Parse(s); ok || got != era.Unknown {
			t.Errorf("Parse(%q) = %v, %v; want unknown", s, got, ok)
		}
	}
	if era.Unknown.String() != "unknown" || era.Unknown.Valid() {
		t.Errorf("Unknown is %q, valid %v", era.Unknown.String(), era.Unknown.Valid())
	}
}
