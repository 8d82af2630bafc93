package main

// Load failures must never make findings vanish silently: each test builds a
// small nested module in a temporary directory (fully offline: the module
// proxy is a loopback server answering 403, or GOPROXY=off) and checks the
// exit code, the root cause in the go command's own words, and that the
// packages that did load are still analysed, in text, -json and SARIF.

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/migratecheck/sarif/sariftest"
)

// writeModule writes files (relative path → content) into a new temporary
// directory and returns it.
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	setup(t) // the tests pass binary to runIn
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// rawCall is a package with one raw "tasks/result" request: one MCP001.
func rawCall(pkg, imports string) string {
	return "package " + pkg + "\n\nimport (\n\t\"encoding/json\"\n" + imports + ")\n\n" +
		"type request struct {\n\tMethod string `json:\"method\"`\n}\n\n" +
		"func Fetch() ([]byte, error) { return json.Marshal(request{Method: \"tasks/result\"}) }\n"
}

type sarifRun struct {
	Invocations []struct {
		ExecutionSuccessful        bool
		ToolExecutionNotifications []struct {
			Level   string
			Message struct{ Text string }
		}
	}
	Results []struct {
		RuleID    string
		Locations []struct {
			PhysicalLocation struct {
				ArtifactLocation struct{ URI string }
			}
		}
	}
}

func parseSARIF(t *testing.T, out string) sarifRun {
	t.Helper()
	sariftest.Validate(t, []byte(out))
	var log struct{ Runs []sarifRun }
	if err := json.Unmarshal([]byte(out), &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("SARIF: %v\n%s", err, out)
	}
	return log.Runs[0]
}

// TestUnresolvableImport: a dependency the module proxy refuses (403) makes
// the run exit 1 and names the import and the proxy's answer in every
// format; the package that imports the broken one is still analysed.
func TestUnresolvableImport(t *testing.T) {
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "forbidden by policy", http.StatusForbidden)
	}))
	defer proxy.Close()
	env := []string{"GOPROXY=" + proxy.URL, "GOSUMDB=off", "GONOSUMDB=", "GOPRIVATE=", "GONOPROXY="}
	dir := writeModule(t, map[string]string{
		"go.mod":          "module example.com/shop\n\ngo 1.26.0\n\nrequire example.com/unavailable v1.0.0\n",
		"vault/vault.go":  "package vault\n\nimport \"example.com/unavailable/secrets\"\n\nfunc Key() string { return secrets.Key }\n",
		"orders/order.go": rawCall("orders", "\n\t_ \"example.com/shop/vault\"\n"),
		"other/other.go":  rawCall("other", ""),
	})

	r := runEnv(t, env, dir, binary, "./...")
	wantCode(t, r, 1, "module with an unavailable dependency")
	cause := regexp.MustCompile(`vault[/\\]vault\.go:3:8: could not import example\.com/unavailable/secrets: example\.com/unavailable@v1\.0\.0: reading http://127\.0\.0\.1:\d+/example\.com/unavailable/@v/v1\.0\.0\.\w+: 403 Forbidden\s+server response: forbidden by policy \(package example\.com/shop/vault\)`)
	if !cause.MatchString(r.stderr) {
		t.Errorf("the import and the proxy's 403 are not named:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "invalid package name") {
		t.Errorf("the type checker's placeholder error leaked instead of the root cause:\n%s", r.stderr)
	}
	for _, want := range []string{"orders/order.go:", "other/other.go:", "1 package did not load or type-check", "-keep-going", "example.com/shop/vault"} {
		if !strings.Contains(r.stderr, filepath.FromSlash(want)) {
			t.Errorf("missing %q (findings of the packages that loaded, or the note on the broken one):\n%s", want, r.stderr)
		}
	}

	r = runEnv(t, env, dir, binary, "-json", "./...")
	wantCode(t, r, 1, "-json")
	var tree map[string]map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &tree); err != nil {
		t.Fatalf("-json: %v\n%s", err, r.stdout)
	}
	var e struct{ Error string }
	if err := json.Unmarshal(tree["example.com/shop/vault"]["migratecheck"], &e); err != nil || !strings.Contains(e.Error, "403 Forbidden") {
		t.Errorf("-json: vault's error entry lacks the root cause (%v): %s", err, tree["example.com/shop/vault"]["migratecheck"])
	}
	if !strings.Contains(string(tree["example.com/shop/orders"]["migratecheck"]), "MCP001") {
		t.Errorf("-json: the importer's finding is missing:\n%s", r.stdout)
	}

	r = runEnv(t, env, dir, binary, "-format", "sarif", "./...")
	wantCode(t, r, 1, "-format sarif")
	run := parseSARIF(t, r.stdout)
	if len(run.Invocations) != 1 || run.Invocations[0].ExecutionSuccessful {
		t.Fatalf("SARIF: want executionSuccessful:false, got %+v", run.Invocations)
	}
	found := false
	for _, n := range run.Invocations[0].ToolExecutionNotifications {
		if n.Level == "error" && strings.Contains(n.Message.Text, "example.com/shop/vault") && strings.Contains(n.Message.Text, "403 Forbidden") {
			found = true
		}
	}
	if !found {
		t.Errorf("SARIF: no error notification naming the package and the 403: %+v", run.Invocations[0].ToolExecutionNotifications)
	}
	if len(run.Results) != 2 {
		t.Errorf("SARIF: %d results, want the 2 MCP001 of orders and other", len(run.Results))
	}
}

// TestMissingReplacement: a replace directive to a directory that does not
// exist is reported with the go command's words (GOPROXY=off: no network).
func TestMissingReplacement(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"go.mod":      "module example.com/gw\n\ngo 1.26.0\n\nrequire example.com/fork v1.0.0\n\nreplace example.com/fork => ../fork-not-checked-out\n",
		"route/r.go":  "package route\n\nimport \"example.com/fork\"\n\nvar Name = fork.Name\n",
		"proxy/p.go":  rawCall("proxy", "\n\t_ \"example.com/gw/route\"\n"),
		"proxy/p2.go": "package proxy\n",
	})
	r := runEnv(t, []string{"GOPROXY=off"}, dir, binary, "./...")
	wantCode(t, r, 1, "replacement directory missing")
	if !strings.Contains(r.stderr, "could not import example.com/fork: example.com/fork@v1.0.0: replacement directory ../fork-not-checked-out does not exist") {
		t.Errorf("root cause missing:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, filepath.FromSlash("proxy/p.go:")+"13:") {
		t.Errorf("the importer's finding is missing:\n%s", r.stderr)
	}
}

// TestTypeErrorKeepGoing: a package with an undefined identifier is an error
// (exit 1). Its findings are withheld by default and reported from partial
// type information with -keep-going; its importer is analysed either way.
func TestTypeErrorKeepGoing(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"go.mod": "module example.com/cli\n\ngo 1.26.0\n",
		"rpc/rpc.go": "package rpc\n\nimport \"encoding/json\"\n\ntype request struct {\n\tMethod string `json:\"method\"`\n}\n\n" +
			"func Result() ([]byte, error) { return json.Marshal(request{Method: \"tasks/result\"}) }\n\n" +
			"func List() ([]byte, error) { logf(\"listing\"); return json.Marshal(request{Method: \"tasks/list\"}) }\n\n" +
			"type Task struct {\n\tTaskID string `json:\"taskId\"`\n\tStatus string `json:\"status\"`\n\tTTL    int    `json:\"ttl\"`\n}\n",
		"cmd/main.go": rawCall("main", "\n\t_ \"example.com/cli/rpc\"\n") + "\nfunc main() {}\n",
	})
	r := runIn(t, dir, binary, "./...")
	wantCode(t, r, 1, "undefined identifier")
	if !strings.Contains(r.stderr, filepath.FromSlash("rpc/rpc.go")+":11:") || !strings.Contains(r.stderr, "undefined: logf") {
		t.Errorf("type error not reported:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, ": MCP002:") || !strings.Contains(r.stderr, filepath.FromSlash("cmd/main.go:")) {
		t.Errorf("want the broken package's findings withheld and the importer's reported:\n%s", r.stderr)
	}

	r = runIn(t, dir, binary, "-keep-going", "./...")
	wantCode(t, r, 1, "-keep-going")
	for _, want := range []string{": MCP001:", ": MCP002:", "-keep-going reports its findings from partial type information"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("-keep-going: missing %q:\n%s", want, r.stderr)
		}
	}
	if n := len(findingLine.FindAllString(r.stderr, -1)); n != 4 {
		t.Errorf("-keep-going: %d findings, want 4 (3 in rpc, 1 in cmd):\n%s", n, r.stderr)
	}
	// No edits in a package whose guards ran on partial type information.
	r = runIn(t, dir, binary, "-keep-going", "-fix-tags", "-diff", "./...")
	wantCode(t, r, 1, "-keep-going -fix-tags -diff")
	if r.stdout != "" {
		t.Errorf("a fix was offered in a package that does not type-check:\n%s", r.stdout)
	}
	r = runIn(t, dir, binary, "-keep-going", "-json", "./...")
	wantCode(t, r, 1, "-keep-going -json")
	var tree map[string]map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &tree); err != nil {
		t.Fatal(err)
	}
	rpc := tree["example.com/cli/rpc"]
	if !strings.Contains(string(rpc["load"]), "undefined: logf") || !strings.Contains(string(rpc["migratecheck"]), "MCP002") {
		t.Errorf("-keep-going -json: want the error under \"load\" and the findings under \"migratecheck\":\n%s", r.stdout)
	}
	r = runIn(t, dir, binary, "-keep-going", "-format", "sarif", "./...")
	wantCode(t, r, 1, "-keep-going -format sarif")
	if run := parseSARIF(t, r.stdout); run.Invocations[0].ExecutionSuccessful || len(run.Results) != 4 {
		t.Errorf("-keep-going SARIF: executionSuccessful %v, %d results; want false, 4", run.Invocations[0].ExecutionSuccessful, len(run.Results))
	}
}

// TestMissingEmbed: a //go:embed pattern without files breaks its package;
// an importer's "tasks/result" literal is still reported.
func TestMissingEmbed(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"go.mod":          "module example.com/web\n\ngo 1.26.0\n",
		"assets/fs.go":    "package assets\n\nimport \"embed\"\n\n//go:embed static\nvar FS embed.FS\n",
		"handler/h.go":    rawCall("handler", "\n\t_ \"example.com/web/assets\"\n"),
		"handler/note.md": "the handler serves assets\n",
	})
	r := runIn(t, dir, binary, "./...")
	wantCode(t, r, 1, "missing embed directory")
	if !strings.Contains(r.stderr, filepath.FromSlash("assets/fs.go")+":5:12: pattern static: no matching files found (package example.com/web/assets)") {
		t.Errorf("embed error not reported:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, filepath.FromSlash("handler/h.go")+":13:") {
		t.Errorf("the importer's finding is missing:\n%s", r.stderr)
	}
}

// TestChecksumMismatch: when the go command cannot list anything (go.sum
// does not match the module cache), its own message is the error, not
// "./... matched no packages", and SARIF is still written.
func TestChecksumMismatch(t *testing.T) {
	dir := fixtureCopy(t)
	sum := filepath.Join(dir, "go.sum")
	data, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	bad := regexp.MustCompile(`(?m)^(github\.com/mark3labs/mcp-go v1\.2\.1) h1:\S+$`).ReplaceAll(data, []byte("$1 h1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="))
	if err := os.WriteFile(sum, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"GOPROXY=off"}
	r := runEnv(t, env, dir, binary, "./legacy")
	wantCode(t, r, 1, "go.sum mismatch")
	if !strings.Contains(r.stderr, "checksum mismatch") || strings.Contains(r.stderr, "matched no packages") {
		t.Errorf("want the go command's checksum error:\n%s", r.stderr)
	}
	r = runEnv(t, env, dir, binary, "-json", "./legacy")
	wantCode(t, r, 1, "go.sum mismatch, -json")
	var tree map[string]map[string]struct{ Error string }
	if err := json.Unmarshal([]byte(r.stdout), &tree); err != nil || !strings.Contains(tree["./legacy"]["migratecheck"].Error, "checksum mismatch") {
		t.Errorf("-json: want an error entry under the pattern (%v):\n%s", err, r.stdout)
	}
	r = runEnv(t, env, dir, binary, "-format", "sarif", "./legacy")
	wantCode(t, r, 1, "go.sum mismatch, SARIF")
	run := parseSARIF(t, r.stdout)
	if run.Invocations[0].ExecutionSuccessful || !strings.Contains(run.Invocations[0].ToolExecutionNotifications[0].Message.Text, "checksum mismatch") {
		t.Errorf("SARIF: %+v", run.Invocations)
	}
}

// TestOutputOncePerFinding: text output names each finding's severity, and
// -json lists a finding of a package with tests once, not again under the
// test variant "p [p.test]".
func TestOutputOncePerFinding(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"go.mod":           "module example.com/tool\n\ngo 1.26.0\n",
		"rpc/rpc.go":       rawCall("rpc", "") + "\nvar Meta = map[string]any{\"io.modelcontextprotocol/related-task\": map[string]string{\"taskId\": \"t\"}}\n",
		"rpc/rpc_test.go":  "package rpc\n\nimport \"testing\"\n\nfunc TestFetch(t *testing.T) { _, _ = Fetch() }\n",
		"rpc/ext_test.go":  "package rpc_test\n\nimport (\n\t\"testing\"\n\n\t\"example.com/tool/rpc\"\n)\n\nfunc TestExt(t *testing.T) { _, _ = rpc.Fetch() }\n",
		"rpc/doc.go":       "// Package rpc sends raw JSON-RPC.\npackage rpc\n",
		"rpc/zz_helper.go": "package rpc\n",
	})
	r := runIn(t, dir, binary, "./...")
	wantCode(t, r, 3, "findings")
	for _, want := range []string{filepath.FromSlash("rpc/rpc.go") + ":11:", ": error: MCP001: ", ": warning: MCP011: "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("text: missing %q:\n%s", want, r.stderr)
		}
	}
	r = runIn(t, dir, binary, "-json", "./...")
	wantCode(t, r, 0, "-json")
	if n := strings.Count(r.stdout, `"category": "MCP001"`); n != 1 {
		t.Errorf("-json lists the MCP001 finding %d times, want once:\n%s", n, r.stdout)
	}
}

// TestTypeErrorNoCrash: a package that does not type-check and indexes an
// undefined value with the related-task _meta key once made the metakeys
// pass dereference a nil type and the whole run die (exit 2, no report in
// any mode). Now the broken package is an error (exit 1) and every other
// package is reported, in text, -json, -keep-going and -fix -diff.
func TestTypeErrorNoCrash(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"go.mod": "module example.com/crash\n\ngo 1.26.0\n",
		"meta/meta.go": "package meta\n\nfunc Related() any {\n\treturn undefinedMeta[\"io.modelcontextprotocol/related-task\"]\n}\n\n" +
			"func Ext() map[string]any {\n\treturn map[string]any{\"io.modelcontextprotocol/related-task\": undefinedMeta}\n}\n",
		"rpc/rpc.go": rawCall("rpc", ""),
	})
	for _, args := range [][]string{{"./..."}, {"-keep-going", "./..."}, {"-json", "./..."}, {"-keep-going", "-json", "./..."}, {"-fix-tags", "-diff", "./..."}} {
		r := runIn(t, dir, binary, args...)
		wantCode(t, r, 1, strings.Join(args, " "))
		if strings.Contains(r.stderr, "panic") || !strings.Contains(r.stderr, "undefined: undefinedMeta") {
			t.Errorf("%v: want the type error and no panic:\n%s", args, r.stderr)
		}
		out := r.stderr
		if slices.Contains(args, "-json") {
			out = r.stdout
		}
		if !slices.Contains(args, "-diff") && !strings.Contains(out, "MCP001") {
			t.Errorf("%v: the finding in example.com/crash/rpc is missing:\n%s%s", args, r.stdout, r.stderr)
		}
		if slices.Contains(args, "-keep-going") && !strings.Contains(out, "MCP011") {
			t.Errorf("%v: the broken package's own finding is missing:\n%s%s", args, r.stdout, r.stderr)
		}
	}
}

// TestVariantsAndCounts: a finding whose words differ between a package and
// its test variant ("once" against "2 times") is listed once in -json, as
// in the text output; a test file that does not type-check withholds only
// the test variant's findings, not the package's; and the -diff summary
// counts the findings the text output shows.
func TestVariantsAndCounts(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"go.mod": "module example.com/dup\n\ngo 1.26.0\n",
		"rpc/rpc.go": "package rpc\n\nimport \"encoding/json\"\n\nconst methodResult = \"tasks/result\"\n\n" +
			"type request struct {\n\tMethod string `json:\"method\"`\n}\n\nfunc Fetch() ([]byte, error) { return json.Marshal(request{Method: methodResult}) }\n",
		"rpc/rpc_test.go": "package rpc\n\nimport \"testing\"\n\nfunc TestFetch(t *testing.T) { _ = request{Method: methodResult} }\n",
		"tb/tb.go": "package tb\n\nimport \"encoding/json\"\n\ntype request struct {\n\tMethod string `json:\"method\"`\n}\n\n" +
			"func List() ([]byte, error) { return json.Marshal(request{Method: \"tasks/list\"}) }\n",
		"tb/tb_test.go": "package tb\n\nimport \"testing\"\n\nfunc TestList(t *testing.T) { undefinedHelper(t) }\n",
	})
	r := runIn(t, dir, binary, "./...")
	wantCode(t, r, 1, "tests that do not type-check")
	if n := len(findingLine.FindAllString(r.stderr, -1)); n != 2 || !strings.Contains(r.stderr, ": MCP002:") {
		t.Errorf("want 2 findings, tb's MCP002 included (only its test variant is broken):\n%s", r.stderr)
	}
	for _, args := range [][]string{{"-json", "./..."}, {"-keep-going", "-json", "./..."}} {
		r := runIn(t, dir, binary, args...)
		if n := strings.Count(r.stdout, `"category"`); n != 2 {
			t.Errorf("%v: %d findings listed, want 2 (once each):\n%s", args, n, r.stdout)
		}
	}
	for _, args := range [][]string{{"-fix-tags", "-diff", "./..."}, {"-keep-going", "-fix-tags", "-diff", "./..."}} {
		r := runIn(t, dir, binary, args...)
		if !strings.Contains(r.stderr, "2 findings: would apply 0 fix(es) in 0 file(s); 2 finding(s) have no enabled automatic fix") {
			t.Errorf("%v: the summary does not add up to the 2 findings of the text output:\n%s", args, r.stderr)
		}
	}
}
