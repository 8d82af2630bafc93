package driver

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// TestSourceRoot: SARIF URIs are relative to the repository root (.git), so
// GitHub resolves %SRCROOT% correctly for modules in subdirectories.
func TestSourceRoot(t *testing.T) {
	repo := t.TempDir()
	mod := filepath.Join(repo, "svc")
	pkg := filepath.Join(mod, "pkg")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := SourceRoot(pkg); got != mod {
		t.Errorf("without .git: %q, want the module root %q", got, mod)
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := SourceRoot(pkg); got != repo {
		t.Errorf("with .git: %q, want the repository root %q", got, repo)
	}
}

func TestExitCode(t *testing.T) {
	f := func(sev rules.Severity, suppressed bool) Finding {
		return Finding{Rule: "MCP001", Severity: sev, Suppressed: suppressed}
	}
	cases := []struct {
		format string
		failOn rules.Severity
		fs     []Finding
		errs   []string
		want   int
	}{
		{FormatText, "", nil, nil, ExitClean},
		{FormatText, "", []Finding{f(rules.Info, false)}, nil, ExitFindings},
		{FormatText, "", []Finding{f(rules.Error, true)}, nil, ExitClean},
		{FormatText, rules.Warning, []Finding{f(rules.Info, false)}, nil, ExitClean},
		{FormatText, rules.Warning, []Finding{f(rules.Error, false)}, nil, ExitFindings},
		{FormatJSON, "", []Finding{f(rules.Error, false)}, nil, ExitClean},
		{FormatSARIF, rules.Error, []Finding{f(rules.Error, false)}, nil, ExitFindings},
		{FormatText, "", []Finding{f(rules.Error, false)}, []string{"broken"}, ExitError},
		{FormatSARIF, "", nil, []string{"broken"}, ExitError},
	}
	for i, c := range cases {
		res := &Result{Findings: c.fs, Errors: c.errs, resolved: &settings.Resolved{FailOn: c.failOn}}
		if got := exitCode(c.format, res); got != c.want {
			t.Errorf("case %d (%s, fail-on %q): exit %d, want %d", i, c.format, c.failOn, got, c.want)
		}
	}
}

func TestStripMarker(t *testing.T) {
	if got := stripMarker("x removed [info]"); got != "x removed" {
		t.Errorf("stripMarker = %q", got)
	}
	if got := stripMarker("x [other]"); got != "x [other]" {
		t.Errorf("stripMarker = %q", got)
	}
}

// TestTestVariantReportsOnce: a constant used in method position by the
// package and by its _test.go file is reported by the package ("once") and
// by its test variant ("2 times"); the run lists it once, in the test
// variant's words, which count every file.
func TestTestVariantReportsOnce(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/tv\n\ngo 1.26\n",
		"p/p.go": `package p

type request struct{ Method string }

const methodResult = "tasks/result"

func get() request { return request{Method: methodResult} }
`,
		"p/p_test.go": `package p

import "testing"

func TestGet(t *testing.T) {
	if get().Method != methodResult {
		t.Fatal("wrong method")
	}
	_ = request{Method: methodResult}
}
`,
	}
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOWORK", "off")
	res, err := Analyze(Options{Dir: dir, Patterns: []string{"./..."}, ConfigPath: "none", Stdout: io.Discard, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("load errors: %v", res.Errors)
	}
	var got []string
	for _, f := range res.Findings {
		if f.Rule == "MCP001" {
			got = append(got, fmt.Sprintf("%s:%d: %s", filepath.Base(f.Pos.Filename), f.Pos.Line, f.Message))
		}
	}
	if len(got) != 1 || !strings.Contains(got[0], "p.go:5:") || !strings.Contains(got[0], "3 times") {
		t.Errorf("want one MCP001 at p.go:5 counting both uses, got %d:\n%s", len(got), strings.Join(got, "\n"))
	}
}
