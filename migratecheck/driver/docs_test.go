package driver

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
)

var update = flag.Bool("update", false, "rewrite the generated parts of docs/rules")

const docsDir = "../../docs/rules"

// TestRuleDocs: every rule (MCP000…MCP014) has a page, every page a rule,
// each page's generated metadata matches the catalogue, each page has the
// sections users need, and the index lists every rule.
func TestRuleDocs(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(docsDir, "MCP*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var pageIDs []string
	for _, p := range pages {
		pageIDs = append(pageIDs, strings.TrimSuffix(filepath.Base(p), ".md"))
	}
	var ruleIDs []string
	for _, r := range catalogue() {
		ruleIDs = append(ruleIDs, r.ID)
	}
	for _, id := range ruleIDs {
		if !slices.Contains(pageIDs, id) {
			t.Errorf("rule %s has no page docs/rules/%s.md", id, id)
		}
	}
	for _, id := range pageIDs {
		if _, ok := rules.Lookup(id); !ok {
			t.Errorf("page docs/rules/%s.md has no rule in migratecheck/rules", id)
		}
	}
	for _, r := range catalogue() {
		path := filepath.Join(docsDir, r.ID+".md")
		data, err := os.ReadFile(path)
		if err != nil {
			continue // reported above
		}
		doc := string(data)
		if !strings.HasSuffix(r.HelpURI, "/docs/rules/"+r.ID+".md") {
			t.Errorf("%s: HelpURI %q does not point at its page", r.ID, r.HelpURI)
		}
		if !strings.HasPrefix(doc, "# "+r.ID+": ") {
			t.Errorf("%s: page must start with \"# %s: \"", path, r.ID)
		}
		for _, sec := range []string{"## Before", "## After", "## Fix"} {
			if !strings.Contains(doc, "\n"+sec) {
				t.Errorf("%s: missing section %q", path, sec)
			}
		}
		if r.ID != rules.DirectiveID && !strings.Contains(doc, "## What changed") {
			t.Errorf("%s: missing section \"## What changed\"", path)
		}
		if !strings.Contains(doc, "```go") {
			t.Errorf("%s: no Go code example", path)
		}
		if fixSec := doc[strings.Index(doc, "\n## Fix"):]; r.Fix == rules.FixOptIn && !strings.Contains(fixSec, "-"+r.FixFlag) {
			t.Errorf("%s: Fix section does not name the opt-in flag -%s", path, r.FixFlag)
		} else if r.Fix == rules.FixNone && !strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(fixSec, "\n## Fix")), "None") {
			t.Errorf("%s: rule has no fix, but the Fix section does not start with \"None\"", path)
		}
		checkBlock(t, path, doc, MetaBegin, MetaEnd, RuleMeta(r))
	}
	index := filepath.Join(docsDir, "README.md")
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	checkBlock(t, index, string(data), IndexBegin, IndexEnd, RuleIndex())
}

func checkBlock(t *testing.T, path, doc, begin, end, want string) {
	t.Helper()
	got, ok := ReplaceBlock(doc, begin, end, want)
	if !ok {
		t.Errorf("%s: generated block markers missing", path)
		return
	}
	if got == doc {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("updated %s", path)
		return
	}
	t.Errorf("%s: generated block is stale; run go test ./migratecheck/driver -run TestRuleDocs -update", path)
}
