package libapi

import (
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/catalog"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/libs"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// TestProbeNoteVersions: the hint never names a go.mod version that lacks
// the API it cites. The probe wins when it saw the API's package (a
// replace directive or a fork can make go.mod's version and the built API
// differ); go.mod's version decides only when the probe could not look.
func TestProbeNoteVersions(t *testing.T) {
	caps, _ := catalog.Lookup(settings.FamilyMCPGo, "server", "WithTaskCapabilities")
	wait, _ := catalog.Lookup(settings.FamilyMCPGo, "client", "Client.TaskResult")
	for _, tc := range []struct {
		name    string
		ent     catalog.Entry
		f       libs.Features
		version string
		want    []string
		not     []string
	}{
		{"probe sees WithExtensions, go.mod names an older version", caps, libs.Features{MCPGoExtProbed: true, MCPGoExtensions: true}, "v0.47.0",
			[]string{"this mcp-go provides server.WithExtensions"}, []string{"v0.47.0"}},
		{"probe sees no WithExtensions, go.mod names a newer version", caps, libs.Features{MCPGoExtProbed: true}, "v1.2.0",
			[]string{"this mcp-go predates the extension APIs", "upgrade to v1.0.0"}, []string{"v1.2.0", "provides"}},
		{"probe and go.mod agree", caps, libs.Features{MCPGoExtProbed: true, MCPGoExtensions: true}, "v1.2.0",
			[]string{"this mcp-go (go.mod requires v1.2.0) provides server.WithExtensions"}, nil},
		{"no probe: go.mod decides", caps, libs.Features{}, "v0.47.0",
			[]string{"this mcp-go (go.mod requires v0.47.0) predates"}, nil},
		{"no probe, beta with the API", caps, libs.Features{}, "v1.0.0-beta.1",
			[]string{"(go.mod requires v1.0.0-beta.1) provides"}, nil},
		{"WaitForTask seen, go.mod older", wait, libs.Features{MCPGoWaitProbed: true, MCPGoWaitForTask: true}, "v0.47.0",
			[]string{"with this mcp-go, client.WaitForTask does the polling"}, []string{"v0.47.0"}},
		{"WaitForTask absent, go.mod newer", wait, libs.Features{MCPGoWaitProbed: true}, "v1.0.0",
			[]string{"this mcp-go has no client.WaitForTask (added in v1.0.0)"}, []string{"requires v1.0.0"}},
	} {
		got := probeNote(tc.ent, tc.f, func() string { return tc.version })
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tc.name, got, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("%s: %q must not contain %q", tc.name, got, n)
			}
		}
	}
}
