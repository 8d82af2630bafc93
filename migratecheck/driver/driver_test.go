package driver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
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
		res := &Result{Findings: c.fs, Errors: c.errs, resolved: &Resolved{FailOn: c.failOn}}
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
