package main

// End-to-end tests: build the migrate-check binary once, then run it on a
// copy of interop/migratecheck-e2e, a nested module that depends on the real
// github.com/mark3labs/mcp-go v1.2.1 (fetched from the module proxy with
// GOFLAGS=-mod=mod into the normal module cache).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/format"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
	"github.com/tasksbridge/tasksbridge/migratecheck/sarif/sariftest"
)

var (
	tmpRoot   string    // removed by TestMain
	setupOnce sync.Once // builds the binary once per test package run
	setupErr  error
	binary    string // built migrate-check
	fixture   string // copy of interop/migratecheck-e2e
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "migrate-check-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	tmpRoot = tmp
	return m.Run()
}

// setup builds the binary and copies the fixture module on first use, so
// runs that select no e2e test (go test -run '^Fuzz') pay nothing.
func setup(t *testing.T) {
	t.Helper()
	setupOnce.Do(func() {
		binary = filepath.Join(tmpRoot, "bin", "migrate-check")
		build := exec.Command("go", "build", "-o", binary, ".")
		if out, err := build.CombinedOutput(); err != nil {
			setupErr = fmt.Errorf("build migrate-check: %v\n%s", err, out)
			return
		}
		fixture = filepath.Join(tmpRoot, "e2e")
		setupErr = copyTree(filepath.Join("..", "..", "interop", "migratecheck-e2e"), fixture)
	})
	if setupErr != nil {
		t.Fatal(setupErr)
	}
}

// fixtureCopy returns a private copy of the fixture module for a test that
// modifies it.
func fixtureCopy(t *testing.T) string {
	t.Helper()
	setup(t)
	dir := t.TempDir()
	if err := copyTree(fixture, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

type result struct {
	stdout, stderr string
	code           int
}

// runIn executes name (the binary or "go") in dir with GOFLAGS=-mod=mod.
func runIn(t *testing.T, dir, name string, args ...string) result {
	t.Helper()
	return runEnv(t, nil, dir, name, args...)
}

// runEnv is runIn with extra environment variables (they win over the
// inherited ones).
func runEnv(t *testing.T, env []string, dir, name string, args ...string) result {
	t.Helper()
	setup(t)
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

func mc(t *testing.T, args ...string) result {
	t.Helper()
	setup(t)
	return runIn(t, fixture, binary, args...)
}

func wantCode(t *testing.T, r result, code int, what string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", what, r.code, code, r.stdout, r.stderr)
	}
}

var findingLine = regexp.MustCompile(`(?m)^([^\s:]+\.go):(\d+):(\d+): (error|warning|info): (MCP\d{3}): (.+)$`)

// TestExitCodes proves 0 (clean), 3 (findings) and 1 (broken package), and
// the vet-style text format with a summary line.
func TestExitCodes(t *testing.T) {
	clean := mc(t, "./clean")
	wantCode(t, clean, 0, "clean package")
	if !strings.Contains(clean.stderr, "migrate-check: no findings in 1 package") {
		t.Errorf("clean summary missing:\n%s", clean.stderr)
	}

	legacy := mc(t, "./legacy")
	wantCode(t, legacy, 3, "legacy package")
	if legacy.stdout != "" {
		t.Errorf("text findings must go to stderr (vet convention); stdout:\n%s", legacy.stdout)
	}
	got := map[string]bool{}
	for _, m := range findingLine.FindAllStringSubmatch(legacy.stderr, -1) {
		if !strings.HasPrefix(m[1], "legacy"+string(filepath.Separator)) {
			t.Errorf("path %q not relative to the working directory", m[1])
		}
		got[m[5]] = true
	}
	for _, id := range []string{"MCP001", "MCP002", "MCP004", "MCP008", "MCP009"} {
		if !got[id] {
			t.Errorf("legacy: no %s finding in\n%s", id, legacy.stderr)
		}
	}
	summary := regexp.MustCompile(`(?m)^migrate-check: \d+ findings \((MCP\d{3}×\d+(, )?)+\) in 1 package \[[0-9.]+m?s\]$`)
	if !summary.MatchString(legacy.stderr) {
		t.Errorf("summary line (findings per rule, packages, time) missing:\n%s", legacy.stderr)
	}

	broken := mc(t, "./broken")
	wantCode(t, broken, 1, "broken package")
	if !strings.Contains(broken.stderr, "broken.go:7:15") {
		t.Errorf("type error not reported:\n%s", broken.stderr)
	}
	// Errors win over findings: the results are incomplete.
	wantCode(t, mc(t, "./legacy", "./broken"), 1, "findings plus a broken package")

	// -fail-on raises the bar for text output.
	wantCode(t, mc(t, "-fail-on", "error", "./legacy"), 3, "-fail-on error with error findings")
	wantCode(t, mc(t, "-rules", "MCP009", "-fail-on", "error", "./legacy"), 0, "-fail-on error with only a warning rule")
}

// TestJSON checks the x/tools JSON tree shape and that -json exits 0 unless
// -fail-on is given.
func TestJSON(t *testing.T) {
	r := mc(t, "-json", "./legacy")
	wantCode(t, r, 0, "-json with findings")
	var tree map[string]map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &tree); err != nil {
		t.Fatalf("not a JSON tree: %v\n%s", err, r.stdout)
	}
	pkg, ok := tree["example.com/migratecheck-e2e/legacy"]
	if !ok {
		t.Fatalf("no entry for the legacy package: %v", tree)
	}
	var diags []struct {
		Category, Posn, End, Message string
	}
	if err := json.Unmarshal(pkg["migratecheck"], &diags); err != nil || len(diags) == 0 {
		t.Fatalf("no diagnostics under analyzer \"migratecheck\": %v\n%s", err, pkg["migratecheck"])
	}
	posn := regexp.MustCompile(`^/.+\.go:\d+:\d+$`)
	for _, d := range diags {
		if !regexp.MustCompile(`^MCP\d{3}$`).MatchString(d.Category) || !posn.MatchString(d.Posn) || d.Message == "" {
			t.Errorf("diagnostic not in x/tools shape: %+v", d)
		}
	}
	wantCode(t, mc(t, "-json", "-fail-on", "warning", "./legacy"), 3, "-json -fail-on warning")

	b := mc(t, "-json", "./broken")
	wantCode(t, b, 1, "-json on a broken package")
	if !strings.Contains(b.stdout, `"error"`) {
		t.Errorf("broken package has no error entry in the JSON tree:\n%s", b.stdout)
	}
}

// TestSARIF validates the SARIF output against the 2.1.0 schema and GitHub's
// requirements, including an in-source suppression.
func TestSARIF(t *testing.T) {
	r := mc(t, "-format", "sarif", "./clean", "./legacy", "./suppressed")
	wantCode(t, r, 0, "-format sarif with findings")
	sariftest.Validate(t, []byte(r.stdout))
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct{ ID, HelpURI string }
				}
			}
			Results []struct {
				RuleID    string
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI, URIBaseID string }
					}
				}
				Suppressions []struct{ Kind string }
			}
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if len(run.Tool.Driver.Rules) != len(rules.All())+1 {
		t.Errorf("%d rules, want the catalogue plus MCP000", len(run.Tool.Driver.Rules))
	}
	var suppressed, legacy int
	for _, res := range run.Results {
		uri := res.Locations[0].PhysicalLocation.ArtifactLocation.URI
		if strings.HasPrefix(uri, "legacy/") {
			legacy++
		}
		if len(res.Suppressions) > 0 {
			suppressed++
			if res.Suppressions[0].Kind != "inSource" || res.RuleID != "MCP001" {
				t.Errorf("suppressed result %s: %+v", res.RuleID, res.Suppressions)
			}
		}
	}
	if legacy == 0 {
		t.Errorf("no results with URIs relative to the module root (legacy/…)")
	}
	if suppressed != 1 {
		t.Errorf("%d suppressed results, want 1 (suppressed/suppressed.go)", suppressed)
	}
	wantCode(t, mc(t, "-format", "sarif", "-fail-on", "error", "./legacy"), 3, "sarif -fail-on error")
}

// TestSuppression: directives silence findings (SARIF keeps them as
// suppressed, see TestSARIF) and unused directives are reported as MCP000.
func TestSuppression(t *testing.T) {
	r := mc(t, "./suppressed")
	wantCode(t, r, 3, "unused directive")
	if strings.Contains(r.stderr, ": MCP001:") || !strings.Contains(r.stderr, ": MCP000:") || !strings.Contains(r.stderr, "1 suppressed") {
		t.Errorf("want the MCP001 finding suppressed and the unused directive reported:\n%s", r.stderr)
	}
	r = mc(t, "-show-ignored", "./suppressed")
	if !strings.Contains(r.stderr, ": MCP001:") || !strings.Contains(r.stderr, "(ignored)") {
		t.Errorf("-show-ignored does not print the suppressed finding:\n%s", r.stderr)
	}
}

// TestConfigAndVetTool: a .migrate-check.yaml at the module root is found
// from a subdirectory and applies in standalone and go vet -vettool modes
// (unitchecker protocol). The go vet part type-checks every dependency once
// per tool build (vetx files), so all vet runs share one fixture copy.
func TestConfigAndVetTool(t *testing.T) {
	dir := fixtureCopy(t)
	cfg := "rules: [all, -MCP008, -MCP009]\nseverity:\n  MCP001: info\n"
	if err := os.WriteFile(filepath.Join(dir, ".migrate-check.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runIn(t, filepath.Join(dir, "legacy"), binary, ".")
	wantCode(t, r, 3, "configured run")
	if strings.Contains(r.stderr, "MCP008") || strings.Contains(r.stderr, "MCP009") || !strings.Contains(r.stderr, "MCP001") {
		t.Errorf("config rules not applied (found from a subdirectory):\n%s", r.stderr)
	}
	// severity MCP001=info: -fail-on warning ignores it.
	wantCode(t, runIn(t, dir, binary, "-rules", "MCP001", "-fail-on", "warning", "./legacy"), 0, "MCP001 lowered to info")
	wantCode(t, runIn(t, dir, binary, "-config", "none", "-rules", "MCP001", "-fail-on", "warning", "./legacy"), 3, "-config none")

	vet := func(args ...string) result {
		return runIn(t, dir, "go", append([]string{"vet", "-vettool=" + binary}, args...)...)
	}
	r = vet("./legacy", "./clean")
	// Severity as in the text output, after the config's MCP001=info.
	vetLine := regexp.MustCompile(`(?m)^legacy[/\\]client\.go:\d+:\d+: info: MCP001: .*[^\]]$`)
	if r.code != 1 || !vetLine.MatchString(r.stderr) {
		t.Errorf("go vet on legacy: exit %d, want 1 with \"file:line:col: info: MCP001: message\" findings\n%s", r.code, r.stderr)
	}
	if regexp.MustCompile(`(?m)^legacy[/\\]\S+: MCP`).MatchString(r.stderr) {
		t.Errorf("go vet printed a finding without its severity:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "MCP008") {
		t.Errorf("go vet mode ignored the config file:\n%s", r.stderr)
	}
	wantCode(t, vet("./clean"), 0, "go vet on the clean package")

	// The standalone rule flags are offered to go vet as aliases of the
	// analyzer flags (go vet forwards only flags listed by -flags).
	var flags []struct{ Name string }
	r = runIn(t, dir, binary, "-flags")
	if err := json.Unmarshal([]byte(r.stdout), &flags); err != nil {
		t.Fatalf("-flags: %v\n%s", err, r.stdout)
	}
	have := map[string]bool{}
	for _, f := range flags {
		have[f.Name] = true
	}
	for _, name := range []string{"rules", "target", "fix-tags", "fix-literals", "migratecheck.rules", "json", "V"} {
		if !have[name] {
			t.Errorf("-flags lacks %q", name)
		}
	}
}

// TestBuildTags: -tags and GOFLAGS=-tags select files (the go command does
// the same for go vet -vettool).
func TestBuildTags(t *testing.T) {
	setup(t)
	wantCode(t, mc(t, "./tagged"), 0, "without tags")
	wantCode(t, mc(t, "-tags", "integration", "./tagged"), 3, "-tags integration")
	cmd := exec.Command(binary, "./tagged")
	cmd.Dir = fixture
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -tags=integration", "GOWORK=off")
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("GOFLAGS=-tags=integration: %v, want exit 3", err)
	}
}

// TestFix: fixes are opt-in, previewed with -diff, gofmt-clean, idempotent,
// and never touch generated files.
func TestFix(t *testing.T) {
	dir := fixtureCopy(t)
	file := filepath.Join(dir, "rawfix", "rawfix.go")
	gen := filepath.Join(dir, "rawfix", "zz_generated.go")
	before, _ := os.ReadFile(file)
	genBefore, _ := os.ReadFile(gen)

	r := runIn(t, dir, binary, "-diff", "./rawfix")
	wantCode(t, r, 0, "-diff without opt-in")
	if r.stdout != "" {
		t.Errorf("a fix was offered without -fix-tags:\n%s", r.stdout)
	}
	r = runIn(t, dir, binary, "-fix-tags", "-diff", "./rawfix")
	wantCode(t, r, 0, "-fix-tags -diff")
	if !strings.Contains(r.stdout, "+++ b/rawfix/rawfix.go") || !strings.Contains(r.stdout, `json:"ttlMs"`) ||
		!strings.Contains(r.stdout, `json:"pollIntervalMs,omitempty"`) || strings.Contains(r.stdout, "zz_generated") {
		t.Errorf("unexpected diff:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(after, before) {
		t.Error("-diff modified the file")
	}

	wantCode(t, runIn(t, dir, binary, "-fix-tags", "-fix", "./rawfix"), 0, "-fix-tags -fix")
	after, _ := os.ReadFile(file)
	if bytes.Equal(after, before) || !bytes.Contains(after, []byte(`json:"ttlMs"`)) {
		t.Fatalf("fix not applied:\n%s", after)
	}
	if formatted, err := format.Source(after); err != nil || !bytes.Equal(formatted, after) {
		t.Errorf("fixed file is not gofmt-clean:\n%s", after)
	}
	if genAfter, _ := os.ReadFile(gen); !bytes.Equal(genAfter, genBefore) {
		t.Error("generated file was modified")
	}
	r = runIn(t, dir, binary, "-fix-tags", "-diff", "./rawfix")
	if r.code != 0 || r.stdout != "" {
		t.Errorf("second run is not a no-op (exit %d):\n%s", r.code, r.stdout)
	}
}

// TestUsage: --help names the three ways to run the tool; -explain and
// -list-rules work without packages.
func TestUsage(t *testing.T) {
	r := mc(t, "-help")
	wantCode(t, r, 0, "-help")
	for _, want := range []string{"migrate-check ./...", "go vet -vettool=$(which migrate-check)", "-format sarif", "upload-sarif", "Exit status", "-fail-on"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	r = mc(t, "-explain", "MCP006")
	wantCode(t, r, 0, "-explain")
	if !strings.Contains(r.stdout, "Before (2025-11-25)") || !strings.Contains(r.stdout, "-fix-tags") {
		t.Errorf("-explain output:\n%s", r.stdout)
	}
	wantCode(t, mc(t, "-explain", "MCP999"), 1, "-explain unknown rule")
	r = mc(t, "-list-rules")
	wantCode(t, r, 0, "-list-rules")
	if strings.Count(r.stdout, "\nMCP0") != len(rules.All())+1 { // the catalogue plus MCP000
		t.Errorf("-list-rules:\n%s", r.stdout)
	}
	wantCode(t, mc(t, "-format", "xml", "./clean"), 1, "bad -format")
	wantCode(t, mc(t, "-rules", "MCP999", "./clean"), 1, "bad -rules")
}

// TestFactsAcrossPackages: uses of a wrapper that re-exports the legacy API
// are found through analysis facts (passes/reexport), also when only the
// using package is named: its module-local dependency is then analysed for
// facts but not reported on.
func TestFactsAcrossPackages(t *testing.T) {
	r := mc(t, "./usewrap")
	wantCode(t, r, 3, "usewrap")
	for _, want := range []string{": MCP004: wrap.Tasks", ": MCP009: wrap.Required", "in 1 package"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("missing %q in\n%s", want, r.stderr)
		}
	}
	inWrap := regexp.MustCompile(`(?m)^wrap[/\\]wrap\.go:`)
	if inWrap.MatchString(r.stderr) {
		t.Errorf("findings in the dependency wrap were reported although only ./usewrap was requested:\n%s", r.stderr)
	}
	r = mc(t, "./wrap", "./usewrap")
	if !inWrap.MatchString(r.stderr) || !strings.Contains(r.stderr, "usewrap.go:") {
		t.Errorf("both packages requested, want findings in both:\n%s", r.stderr)
	}
}
