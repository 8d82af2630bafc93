package docscheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigReferenceExtraction(t *testing.T) {
	doc := "intro\n" + ReferenceBegin + "\n| a |\n|---|\n" + ReferenceEnd + "\nafter\n"
	if got, err := ConfigReference([]byte(doc)); err != nil || got != "| a |\n|---|\n" {
		t.Fatalf("%q %v", got, err)
	}
	for _, bad := range []string{"no markers", ReferenceBegin + "\n| a |\n"} {
		if _, err := ConfigReference([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestDocsConfigReference compares the config file reference in
// docs/MIGRATION.md with what the flags of bridge serve say (`bridge config
// reference`); run by `make docs-check`. To update the guide, paste the
// command's output between the markers.
func TestDocsConfigReference(t *testing.T) {
	if os.Getenv("TASKSBRIDGE_DOCS_CHECK") == "" {
		t.Skip("run by `make docs-check` (TASKSBRIDGE_DOCS_CHECK=1)")
	}
	root := moduleRoot(t)
	guide, err := os.ReadFile(filepath.Join(root, "docs", "MIGRATION.md"))
	if err != nil {
		t.Fatal(err)
	}
	inDoc, err := ConfigReference(guide)
	if err != nil {
		t.Fatalf("docs/MIGRATION.md: %v", err)
	}
	cmd := exec.Command("go", "run", "./cmd/bridge", "config", "reference")
	cmd.Dir = root
	cmd.Env = cleanEnv(t.TempDir()) // no TASKSBRIDGE_ variable changes a default
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bridge config reference: %v", err)
	}
	if string(out) != inDoc {
		want, got := strings.Split(string(out), "\n"), strings.Split(inDoc, "\n")
		for i := 0; i < max(len(want), len(got)); i++ {
			var w, g string
			if i < len(want) {
				w = want[i]
			}
			if i < len(got) {
				g = got[i]
			}
			if w != g {
				t.Fatalf("docs/MIGRATION.md's config file reference differs from `bridge config reference` (paste its output between the markers); first difference, row %d:\n  guide: %s\n  flags: %s", i+1, g, w)
			}
		}
	}
}
