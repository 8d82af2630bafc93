package docscheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A maintainer has the repository and nothing else, so comments and the
// documentation cite what is in it: a spec id (L-xx, M-xx, a row of
// docs/CONFORMANCE.md), a section of docs/ARCHITECTURE.md by name, or a plain
// reason. These are the shapes of citations that point elsewhere.
var (
	// outsideRE: a section of a document that is not in the repository, a
	// numbered fact or invariant of one, or an issue number.
	// (Spaces are written [ ] so that a grep for these citations does not
	// find this line.)
	outsideRE = regexp.MustCompile(`\.md[ ]§|README[ ]fact|\bfact[ ][0-9]|[Ii]nvariants?[ ][0-9]|[Ii]ssue[ ][0-9]+|catalogue[ ]§`)
	// outsideFileRE: the outside documents by name.
	outsideFileRE = regexp.MustCompile(`SCALE[-]OUT|(?:legacy|modern)[-]tasks(?:\.md)?|go[-]sdk\.md|authorization\.md|interop[-]peers(?:\.md)?|shared/(?:design|spec)`)
	// archRE: a mention of the architecture document; in a comment it must
	// read "docs/ARCHITECTURE.md, <Section>".
	archRE = regexp.MustCompile(`(?:docs/)?ARCHITECTURE(?:\.md)?(?:, )?`)
	// archLinkRE: a Markdown link into the architecture document.
	archLinkRE = regexp.MustCompile(`\]\((?:\.\./|docs/)?ARCHITECTURE\.md(#[^)\s]*)?\)`)
	spaceRE    = regexp.MustCompile(`\s+`)
)

const archDoc = "docs/ARCHITECTURE.md"

// selfFile is this checker, the one Go file that quotes what it forbids
// (tests run in their package's folder).
const selfFile = "citations_test.go"

// architectureSections returns the headings of docs/ARCHITECTURE.md.
func architectureSections(src []byte) []string {
	var out []string
	for _, l := range proseLines(src) {
		if m := headingRE.FindStringSubmatch(l.text); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// commentFindings checks the comments of one Go file: no outside citation
// on any line, and every mention of the architecture document names one of
// its sections as "docs/ARCHITECTURE.md, <Section>" (the section may wrap
// onto the next comment line). String literals are not comments, so quoted
// test data is not checked.
func commentFindings(name string, src []byte, sections []string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, g := range f.Comments {
		for _, c := range g.List {
			line := fset.Position(c.Pos()).Line
			for i, l := range strings.Split(c.Text, "\n") {
				for _, re := range []*regexp.Regexp{outsideRE, outsideFileRE} {
					for _, m := range re.FindAllString(l, -1) {
						out = append(out, fmt.Sprintf("%s:%d: cites %q, which a maintainer does not have: %s", name, line+i, m, strings.TrimSpace(l)))
					}
				}
			}
		}
		out = append(out, archCitationFindings(name, fset.Position(g.Pos()).Line, g, sections)...)
	}
	return out, nil
}

// archCitationFindings checks one comment group's mentions of the
// architecture document.
func archCitationFindings(name string, line int, g *ast.CommentGroup, sections []string) []string {
	var raw []string
	for _, c := range g.List {
		t := strings.TrimPrefix(strings.TrimPrefix(c.Text, "//"), "/*")
		raw = append(raw, strings.TrimSuffix(t, "*/"))
	}
	text := spaceRE.ReplaceAllString(strings.Join(raw, " "), " ")
	var out []string
	for _, loc := range archRE.FindAllStringIndex(text, -1) {
		m := text[loc[0]:loc[1]]
		if m != archDoc+", " {
			out = append(out, fmt.Sprintf("%s:%d: %q: cite the architecture document as %q followed by a section name", name, line, m, archDoc+", <Section>"))
			continue
		}
		rest, ok := text[loc[1]:], false
		for _, s := range sections {
			if strings.HasPrefix(rest, s) {
				ok = true
				break
			}
		}
		if !ok {
			cited, _, _ := strings.Cut(rest, ")")
			out = append(out, fmt.Sprintf("%s:%d: %s names no section of %s: %q", name, line, archDoc, archDoc, cited))
		}
	}
	return out
}

// markdownFindings checks one Markdown document line by line; outside is
// false for documents that may cite the repository's own documents by
// section number (README.md names a part of docs/MIGRATION.md that way).
func markdownFindings(name string, src []byte, outside bool, archAnchors map[string]bool) []string {
	var out []string
	for i, l := range strings.Split(string(src), "\n") {
		res := []*regexp.Regexp{outsideFileRE}
		if outside {
			res = append(res, outsideRE)
		}
		for _, re := range res {
			for _, m := range re.FindAllString(l, -1) {
				out = append(out, fmt.Sprintf("%s:%d: cites %q, which a maintainer does not have", name, i+1, m))
			}
		}
		for _, m := range archLinkRE.FindAllStringSubmatch(l, -1) {
			if frag := strings.TrimPrefix(m[1], "#"); frag != "" && !archAnchors[frag] {
				out = append(out, fmt.Sprintf("%s:%d: link to %s#%s: no such section", name, i+1, archDoc, frag))
			}
		}
	}
	return out
}

// TestCitationsStayInTheRepo walks the module: every Go comment (outside
// testdata) and every line of docs/ and README.md cites only what is in
// the repository, and every citation of docs/ARCHITECTURE.md names a section
// it has.
func TestCitationsStayInTheRepo(t *testing.T) {
	root := moduleRoot(t)
	arch, err := os.ReadFile(filepath.Join(root, archDoc))
	if err != nil {
		t.Fatal(err)
	}
	sections := architectureSections(arch)
	if len(sections) < 10 {
		t.Fatalf("%s: %d sections, want the invariants and flows (at least 10)", archDoc, len(sections))
	}
	anchors := Anchors(arch)
	self, err := filepath.Abs(selfFile)
	if err != nil {
		t.Fatal(err)
	}
	var findings []string
	goFiles := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p != root && (d.Name() == "testdata" || d.Name() == "node_modules" || d.Name() == "vendor" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch {
		case p == self:
			// This file's comments and cases spell out the patterns it
			// looks for; TestCitationChecksDetect covers it instead.
		case strings.HasSuffix(p, ".go"):
			goFiles++
			f, err := commentFindings(rel, src, sections)
			if err != nil {
				return err
			}
			findings = append(findings, f...)
		case rel == "README.md":
			findings = append(findings, markdownFindings(rel, src, false, anchors)...)
		case strings.HasPrefix(rel, "docs/") && strings.HasSuffix(p, ".md"):
			findings = append(findings, markdownFindings(rel, src, true, anchors)...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if goFiles < 100 {
		t.Fatalf("walked only %d Go files under %s", goFiles, root)
	}
	for _, f := range findings {
		t.Error(f)
	}
}

// TestCitationChecksDetect shows each check failing on a citation it exists
// to catch, and passing the forms the repository uses.
func TestCitationChecksDetect(t *testing.T) {
	sections := []string{"One watcher per upstream task", "A foreign id answers like an unknown one"}
	cases := []struct {
		name, comment, want string
	}{
		{"outside section", "// See legacy-tasks.md §4.2.", "legacy-tasks.md"},
		{"section sign", "// As other.md §3 says.", ".md §"},
		{"outside section without .md", "// The renames (modern-tasks §5.1).", "modern-tasks"},
		{"rules catalogue", "// Re-exports (rules catalogue §2.8).", "catalogue §"},
		{"numbered invariant", "// Monotonic (invariant 3).", "invariant 3"},
		{"numbered fact", "// Durable first (README fact 7).", "README fact"},
		{"issue", "// Issue 4 item 4: the cache.", "Issue 4"},
		{"shared folder", "// Read ../shared/spec first.", "shared/spec"},
		{"bare architecture", "// One watcher per task (ARCHITECTURE.md).", "followed by a section name"},
		{"old architecture form", "// Logged at debug only (ARCHITECTURE invariant 7).", "followed by a section name"},
		{"unknown section", "// (docs/ARCHITECTURE.md, No such section).", "names no section"},
		{"good, wrapped", "// Shared (docs/ARCHITECTURE.md, One watcher\n// per upstream task).", ""},
		{"good, spec ids", "// Same error as an unknown id (L-38, M-60; docs/ARCHITECTURE.md, A foreign id\n// answers like an unknown one).", ""},
		{"string literal is test data", "var _ = \"legacy-tasks.md §9, invariant 3, issue 4\"", ""},
	}
	for _, c := range cases {
		src := "package p\n\n" + c.comment + "\nvar x int\n"
		got, err := commentFindings("p.go", []byte(src), sections)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		switch {
		case c.want == "" && len(got) != 0:
			t.Errorf("%s: want no finding, got %q", c.name, got)
		case c.want != "" && (len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), c.want)):
			t.Errorf("%s: want a finding containing %q, got %q", c.name, c.want, got)
		}
	}
	anchors := map[string]bool{"one-watcher-per-upstream-task": true}
	md := "[a](ARCHITECTURE.md#one-watcher-per-upstream-task) and [b](ARCHITECTURE.md#gone)\nper modern-tasks.md §6 (issue 3)\n"
	got := strings.Join(markdownFindings("docs/x.md", []byte(md), true, anchors), "\n")
	for _, want := range []string{"#gone: no such section", "modern-tasks.md", "issue 3"} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown: want a finding containing %q, got %q", want, got)
		}
	}
	if strings.Contains(got, "one-watcher") {
		t.Errorf("markdown: the existing anchor was reported: %q", got)
	}
	if got := markdownFindings("README.md", []byte("[docs/MIGRATION.md §3](docs/MIGRATION.md#try-it-locally)\n"), false, anchors); len(got) != 0 {
		t.Errorf("README's own section signs are not outside citations: %q", got)
	}
}
