package modernface_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	modernface "github.com/tasksbridge/tasksbridge/face/modern"
)

// A dual-era endpoint names the same versions in server/discover's
// supportedVersions as in a -32022's data.supported (M-38, M-44), and the
// -32022 echoes the requested version; the official suite's
// sep-2575-server-unsupported-version-error checks that every version of the
// error is one discover lists (before, discover listed only 2026-07-28).
func TestUnsupportedVersionMatchesDiscover_M38(t *testing.T) {
	versions := []string{"2026-07-28", "2025-11-25", "2025-06-18"}
	e := newEnv(t, envOpts{face: func(o *modernface.Options) { o.SupportedVersions = versions }})
	ctx := ctxT(t)
	d := e.rpc(ctx, "server/discover", map[string]any{}, withTasks).ok(t)
	var listed []string
	for _, v := range d["supportedVersions"].([]any) {
		listed = append(listed, fmt.Sprint(v))
	}
	body := []byte(`{"jsonrpc":"2.0","id":9,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	r := e.request(ctx, body, map[string]string{"MCP-Protocol-Version": "v999.0.0", "Mcp-Method": "server/discover"})
	var data struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}
	if r.errCode != -32022 || r.status != 400 || json.Unmarshal(r.errData, &data) != nil || data.Requested != "v999.0.0" || len(data.Supported) == 0 {
		t.Fatalf("unsupported version: HTTP %d %s, want 400 -32022 with data.supported and data.requested", r.status, r.body)
	}
	for _, v := range data.Supported {
		if !slices.Contains(listed, v) {
			t.Errorf("-32022 names %q, which server/discover's supportedVersions %v does not", v, listed)
		}
	}
}
