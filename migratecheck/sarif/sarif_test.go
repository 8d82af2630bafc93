package sarif_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tasksbridge/tasksbridge/migratecheck/sarif"
	"github.com/tasksbridge/tasksbridge/migratecheck/sarif/sariftest"
)

func sample(t *testing.T) []byte {
	t.Helper()
	root := filepath.FromSlash("/repo")
	lines := map[int]string{
		3: "\tx := \"ünï\" + mcp.MethodTasksResult",
		7: "\tTTL *int64 `json:\"ttl\"`",
	}
	b := sarif.New("migrate-check", "v0.1.0", "https://example.invalid/docs", root, func(_ string, line int) []byte {
		return []byte(lines[line])
	})
	b.AddRule(sarif.Rule{ID: "MCP001", Name: "TasksResultRemoved", Title: "tasks/result was removed",
		Summary: "Poll tasks/get.", HelpText: "Poll tasks/get instead.\nSee the spec.", HelpMarkdown: "# MCP001\n\nPoll.",
		HelpURI: "https://example.invalid/docs/rules/MCP001.md", Level: sarif.LevelError, Enabled: true, Tags: []string{"mcp"}})
	b.AddRule(sarif.Rule{ID: "MCP006", Name: "MCP006", Title: "ttl renamed", HelpURI: "https://example.invalid/docs/rules/MCP006.md", Level: sarif.LevelWarning, Enabled: true})
	file := filepath.Join(root, "pkg", "a file.go")
	if err := b.AddFinding(sarif.Finding{RuleID: "MCP001", Level: sarif.LevelError, Message: "tasks/result removed\nuse tasks/get",
		Start: sarif.Pos{Filename: file, Line: 3, Column: 20}, End: sarif.Pos{Filename: file, Line: 3, Column: 41},
		Related: []sarif.Related{{Start: sarif.Pos{Filename: file, Line: 7, Column: 2}, Message: "declared here"}}}); err != nil {
		t.Fatal(err)
	}
	if err := b.AddFinding(sarif.Finding{RuleID: "MCP006", Level: sarif.LevelNote, Message: "ttl is ttlMs",
		Start: sarif.Pos{Filename: file, Line: 7, Column: 13}, End: sarif.Pos{Filename: file, Line: 7, Column: 25},
		FixMessage: "rename tag", Edits: []sarif.Edit{{Filename: file, Offset: 100, Length: 3, Text: "ttlMs"}},
		Suppressed: true, Justification: "storage record"}); err != nil {
		t.Fatal(err)
	}
	if err := b.AddFinding(sarif.Finding{RuleID: "MCP999", Message: "x"}); err == nil {
		t.Error("finding for an unregistered rule was accepted")
	}
	b.AddNotification(sarif.LevelError, "package broken: type error\nmore")
	var buf bytes.Buffer
	if err := b.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestEncodeGitHubShape asserts the fields GitHub code scanning needs.
func TestEncodeGitHubShape(t *testing.T) {
	data := sample(t)
	var log sarif.Log
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if log.Version != "2.1.0" || log.Schema == "" {
		t.Errorf("version/schema = %q/%q", log.Version, log.Schema)
	}
	if got := run.OriginalURIBaseIDs[sarif.SrcRoot].URI; got != "file:///repo/" {
		t.Errorf("SRCROOT = %q", got)
	}
	if r := run.Tool.Driver.Rules[1]; r.Name != "" {
		t.Errorf("rule name equal to id must be dropped, got %q", r.Name)
	}
	r0 := run.Results[0]
	loc := r0.Locations[0].PhysicalLocation
	if loc.ArtifactLocation.URI != "pkg/a%20file.go" || loc.ArtifactLocation.URIBaseID != "%SRCROOT%" {
		t.Errorf("artifact = %+v", loc.ArtifactLocation)
	}
	// Byte column 20 follows "\tx := \"ünï\" + " where ü and ï are 2 bytes but 1 UTF-16 unit each.
	if loc.Region.StartLine != 3 || loc.Region.StartColumn != 18 || loc.Region.EndColumn != 39 {
		t.Errorf("region = %+v, want line 3 col 18..39 (UTF-16)", *loc.Region)
	}
	if strings.Contains(r0.Message.Text, "\n") {
		t.Errorf("message not flattened: %q", r0.Message.Text)
	}
	if r0.Suppressions == nil || len(r0.Suppressions) != 0 {
		t.Errorf("unsuppressed result must carry an empty suppressions array, got %#v", r0.Suppressions)
	}
	if !bytes.Contains(data, []byte(`"suppressions": []`)) {
		t.Error(`encoded log lacks "suppressions": []`)
	}
	r1 := run.Results[1]
	if len(r1.Suppressions) != 1 || r1.Suppressions[0].Kind != "inSource" {
		t.Errorf("suppressed result = %+v", r1.Suppressions)
	}
	if r1.RuleIndex != 1 || len(r1.Fixes) != 1 || *r1.Fixes[0].ArtifactChanges[0].Replacements[0].DeletedRegion.ByteOffset != 100 {
		t.Errorf("rule index / fix = %d %+v", r1.RuleIndex, r1.Fixes)
	}
	if inv := run.Invocations[0]; inv.ExecutionSuccessful || len(inv.ToolExecutionNotifications) != 1 {
		t.Errorf("invocation = %+v", inv)
	}
	if err := sariftest.Structural(data); err != nil {
		t.Errorf("structural: %v", err)
	}
}

// TestSchemaValid validates the encoded log against the SARIF 2.1.0 schema.
func TestSchemaValid(t *testing.T) {
	sariftest.Validate(t, sample(t))
}

// TestStructuralRejects proves the GitHub checks can fail.
func TestStructuralRejects(t *testing.T) {
	bad := []string{
		`{"version":"2.0.0","runs":[]}`,
		`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x","rules":[{"id":"A","name":"A","helpUri":"u","shortDescription":{"text":"t"},"defaultConfiguration":{"level":"error"}}]}},"results":[]}]}`,
		`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x","rules":[]}},"results":[{"ruleId":"A","level":"error","message":{"text":"m"},"locations":[],"suppressions":[]}]}]}`,
		`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x","rules":[{"id":"A","helpUri":"u","shortDescription":{"text":"t"},"defaultConfiguration":{"level":"error"}}]}},"results":[{"ruleId":"A","level":"error","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"file:///abs/a.go"},"region":{"startLine":1,"startColumn":1}}}]}]}]}`,
		`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x","rules":[{"id":"A","helpUri":"u","shortDescription":{"text":"t"},"defaultConfiguration":{"level":"error"}}]}},"results":[{"ruleId":"A","level":"error","message":{"text":"m"},"suppressions":[],"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a.go","uriBaseId":"%SRCROOT%"},"region":{"startLine":0,"startColumn":0}}}]}]}]}`,
	}
	for i, s := range bad {
		if err := sariftest.Structural([]byte(s)); err == nil {
			t.Errorf("case %d accepted: %s", i, s)
		}
	}
}

func TestUTF16Column(t *testing.T) {
	cases := []struct {
		line string
		col  int
		want int
	}{
		{"abc", 1, 1},
		{"abc", 3, 3},
		{"é=1", 3, 2},
		{"😀x", 5, 3}, // a 4-byte rune is 2 UTF-16 units
		{"ab", 6, 6}, // past end of line counts bytes
	}
	for _, c := range cases {
		if got := sarif.UTF16Column([]byte(c.line), c.col); got != c.want {
			t.Errorf("UTF16Column(%q,%d) = %d, want %d", c.line, c.col, got, c.want)
		}
	}
	if got := sarif.Flatten(" a\r\n b \n\nc "); got != "a b c" {
		t.Errorf("Flatten = %q", got)
	}
	if sarif.LevelOf("info") != sarif.LevelNote || sarif.LevelOf("error") != sarif.LevelError || sarif.LevelOf("warning") != sarif.LevelWarning {
		t.Error("LevelOf mapping wrong")
	}
}

// TestSchemaRejects proves the schema validation is live: an invalid level and
// a missing message fail.
func TestSchemaRejects(t *testing.T) {
	sch, err := sariftest.Schema()
	if err != nil {
		t.Skipf("schema unavailable: %v", err)
	}
	bad := `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[{"ruleId":"A","level":"fatal"}]}]}`
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(bad))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err == nil {
		t.Error("schema accepted an invalid log")
	}
}
