package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// loadGraph is the module's real import graph: `go list` of every package,
// non-test imports only.
func loadGraph(t *testing.T) graph {
	t.Helper()
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Deps,Error", "./...")
	cmd.Dir = strings.TrimSpace(string(dir))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v\n%s", err, stderr.Bytes())
	}
	g := graph{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath    string
			Imports, Deps []string
			Error         *struct{ Err string }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list: %v", err)
		}
		if p.Error != nil {
			t.Fatalf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		g[p.ImportPath] = pkgInfo{Imports: p.Imports, Deps: p.Deps}
	}
	return g
}

// withImport returns a copy of g in which the module-relative package from
// also imports to.
func withImport(g graph, from, to string) graph {
	c := make(graph, len(g))
	for k, v := range g {
		c[k] = v
	}
	p := c[module+"/"+from]
	p.Imports = append(slices.Clone(p.Imports), module+"/"+to)
	c[module+"/"+from] = p
	return c
}

func TestTreeFollowsTheLayout(t *testing.T) {
	g := loadGraph(t)
	// The graph is the real one: it holds the packages the rules are about.
	for _, p := range []string{"legacy", "modern", "translate", "sessionmap", "face/legacy", "face/modern", "router", "cmd/bridge"} {
		if _, ok := g[module+"/"+p]; !ok {
			t.Fatalf("go list found no package %s; the layout moved without this test", p)
		}
	}
	for _, v := range check(g) {
		t.Error(v.Message)
	}
}

// findViolation returns the violation of rule from → to in vs.
func findViolation(vs []violation, rule, from, to string) (violation, bool) {
	for _, v := range vs {
		if v.Rule == rule && v.From == from && v.To == to {
			return v, true
		}
	}
	return violation{}, false
}

func TestUpwardImportIsReported(t *testing.T) {
	g := withImport(loadGraph(t), "sessionmap", "face/legacy")
	vs := check(g)
	v, ok := findViolation(vs, "layers", "sessionmap", "face/legacy")
	if !ok {
		t.Fatalf("sessionmap importing face/legacy passed; violations: %v", vs)
	}
	for _, want := range []string{"sessionmap imports face/legacy", "upward import", "rule layers"} {
		if !strings.Contains(v.Message, want) {
			t.Errorf("message %q does not say %q", v.Message, want)
		}
	}
	// The back edge (face/legacy imports sessionmap) makes the two folders
	// import each other, too.
	if _, ok := findViolation(vs, "folders", "face/legacy", "sessionmap"); !ok {
		t.Errorf("no folders violation for face/legacy ↔ sessionmap; violations: %v", vs)
	}
}

func TestRulesOnSyntheticGraphs(t *testing.T) {
	m := func(p string) string { return module + "/" + p }
	base := graph{
		m("rpc"):                        {},
		m("legacy"):                     {Imports: []string{m("rpc"), "encoding/json"}},
		m("translate"):                  {Imports: []string{m("legacy")}},
		m("sessionmap"):                 {Imports: []string{"os"}},
		m("internal/identity"):          {Imports: []string{m("sessionmap")}},
		m("router"):                     {Imports: []string{m("sessionmap"), m("translate")}},
		m("internal/testkit/redistest"): {Imports: []string{"os/exec"}},
		m("bench/cluster"):              {Imports: []string{m("internal/testkit/redistest"), m("router")}},
	}
	if vs := check(base); len(vs) != 0 {
		t.Fatalf("the base graph should pass: %v", vs)
	}
	for _, tc := range []struct {
		name           string
		edit           func(graph)
		rule, from, to string
		says           []string
	}{
		{"pure does I/O", func(g graph) {
			p := g[m("translate")]
			p.Imports = append(p.Imports, "net/http")
			g[m("translate")] = p
		}, "pure", "translate", "net/http", []string{"translate imports net/http", "no I/O"}},
		{"pure depends on go-sdk mcp", func(g graph) {
			p := g[m("legacy")]
			p.Deps = append(p.Deps, sdkMCP)
			g[m("legacy")] = p
		}, "pure", "legacy", sdkMCP, []string{"jsonrpc types only"}},
		{"pure imports impure", func(g graph) {
			p := g[m("translate")]
			p.Imports = append(p.Imports, m("sessionmap"))
			g[m("translate")] = p
		}, "pure", "translate", "sessionmap", []string{"only pure packages"}},
		{"upward", func(g graph) {
			p := g[m("sessionmap")]
			p.Imports = append(p.Imports, m("router"))
			g[m("sessionmap")] = p
		}, "layers", "sessionmap", "router", []string{"upward", `"store, plumbing and ops"`, `"router"`}},
		{"product imports a test kit", func(g graph) {
			p := g[m("router")]
			p.Imports = append(p.Imports, m("internal/testkit/redistest"))
			g[m("router")] = p
		}, "testkit", "router", "internal/testkit/redistest", []string{"test kit", "_test.go"}},
		{"siblings import each other", func(g graph) {
			p := g[m("sessionmap")]
			p.Imports = append(p.Imports, m("internal/identity"))
			g[m("sessionmap")] = p
		}, "folders", "internal/identity", "sessionmap", []string{"import each other", "sessionmap imports internal/identity"}},
		{"unplaced folder", func(g graph) {
			g[m("newfolder/x")] = pkgInfo{}
		}, "placed", "newfolder/x", "", []string{"README.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := graph{}
			for k, v := range base {
				g[k] = pkgInfo{Imports: slices.Clone(v.Imports), Deps: slices.Clone(v.Deps)}
			}
			tc.edit(g)
			vs := check(g)
			v, ok := findViolation(vs, tc.rule, tc.from, tc.to)
			if !ok {
				t.Fatalf("no %s violation %s → %s; got %v", tc.rule, tc.from, tc.to, vs)
			}
			for _, s := range tc.says {
				if !strings.Contains(v.Message, s) {
					t.Errorf("message %q does not say %q", v.Message, s)
				}
			}
		})
	}
}

// A pure subpackage of translate (the wait rule's home, say) is placed with
// translate and held to the pure rules.
func TestTranslateSubpackageIsPure(t *testing.T) {
	r, ok := rowOf("translate/waitrule")
	if !ok || !r.pure || r.layer != layerTranslation {
		t.Fatalf("translate/waitrule: row %+v (found %v), want a pure row of the translation layer", r, ok)
	}
	if r, ok := rowOf("era"); !ok || !r.pure || r.layer != layerTranslation {
		t.Fatalf("era: row %+v (found %v), want a pure row of the translation layer", r, ok)
	}
}

// README.md's Layout table names every folder of the layout, so a maintainer
// finds each one from the README alone.
func TestReadmeListsEveryFolder(t *testing.T) {
	dir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	readme, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(dir)), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "\n## Layout\n")
	if !ok {
		t.Fatal(`README.md has no "## Layout" section`)
	}
	table, _, _ = strings.Cut(table, "\n## ")
	for _, r := range layout {
		if !strings.Contains(table, "`"+r.folder+"/") {
			t.Errorf("README.md's Layout table does not list %s/", r.folder)
		}
	}
}
