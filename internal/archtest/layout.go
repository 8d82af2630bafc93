// Package archtest checks the architecture rules that the compiler does not.
//
// The module is laid out in folders by role, and imports run one way, lowest
// layer first: wire types → translation and era → store, plumbing and ops →
// task runtime → upstream clients → faces → router → test kits → binaries,
// bench and interop. The layout table below is the rule as data; check
// applies it to an import graph (the test feeds it `go list` of the module).
// Only non-test imports count: a test may import anything it drives.
//
// The four rules:
//
//   - pure: the wire, translation and era packages do no I/O — they import
//     none of net, net/http, os, os/exec and the go-sdk mcp package (only
//     go-sdk's jsonrpc types), not even through another package, and import
//     only pure packages of this module;
//   - layers: a package imports only packages of a lower layer, of its own
//     folder (the row's subtree), or of a sibling folder of the same layer
//     that does not import it back (rule folders);
//   - testkit: product packages never import a test kit (internal/testkit,
//     sessionmap/storetest); tests, test kits, bench and interop may;
//   - folders: no two folders (rows of the table) import each other.
package archtest

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// module is the module path every package of the graph is relative to.
const module = "github.com/tasksbridge/tasksbridge"

// Layers, lowest first.
const (
	layerWire        = iota // leaf vocabulary: error codes, raw JSON, build info
	layerEraTypes           // each era's wire types
	layerTranslation        // pure mappings between the eras, era rules
	layerPlumbing           // the store, request plumbing, ops, migrate-check's library
	layerRuntime            // the task runtime both faces share
	layerUpstream           // clients of upstream servers
	layerFace               // the two translating faces
	layerRoot               // the composition root and the embedded demo server
	layerTestkit            // kits that tests and benchmarks import
	layerBinary             // binaries, bench, interop, deploy checks, this package
)

var layerNames = [...]string{
	layerWire:        "wire basics",
	layerEraTypes:    "era wire types",
	layerTranslation: "translation and era",
	layerPlumbing:    "store, plumbing and ops",
	layerRuntime:     "task runtime",
	layerUpstream:    "upstream clients",
	layerFace:        "faces",
	layerRoot:        "router",
	layerTestkit:     "test kits",
	layerBinary:      "binaries, bench and interop",
}

// kind says who may import a folder's packages.
type kind int

const (
	product kind = iota // shipped code
	testkit             // imported by tests, test kits, bench and interop only
	tooling             // bench, interop, deploy and architecture checks: import anything below
)

// row is one folder of the layout: the folder and its subtree, unless a
// longer row claims part of it.
type row struct {
	folder string // module-relative
	layer  int
	kind   kind
	pure   bool // no I/O (rule pure)
}

// layout is the rule as data: every package of the module belongs to the
// row with the longest folder that contains it. README.md's "Layout" table
// lists the same folders with their jobs; a new folder goes into both.
var layout = []row{
	{"rpc", layerWire, product, true},
	{"internal/rawjson", layerWire, product, true},
	{"internal/version", layerWire, product, false},

	{"legacy", layerEraTypes, product, true},
	{"modern", layerEraTypes, product, true},

	{"translate", layerTranslation, product, true}, // and any pure subpackage
	{"era", layerTranslation, product, true},

	{"sessionmap", layerPlumbing, product, false},
	{"internal/edge", layerPlumbing, product, false},
	{"internal/identity", layerPlumbing, product, false},
	{"internal/oauthmeta", layerPlumbing, product, false},
	{"internal/tlsconf", layerPlumbing, product, false},
	{"internal/httpguard", layerPlumbing, product, false},
	{"internal/mcpio", layerPlumbing, product, false},
	{"internal/cmdline", layerPlumbing, product, false},
	{"ops", layerPlumbing, product, false},
	// migrate-check's analyzers: a product of their own that imports
	// nothing of the bridge; its binary is in cmd/.
	{"migratecheck", layerPlumbing, product, false},

	{"runtime", layerRuntime, product, false},

	{"upstream/legacy", layerUpstream, product, false},
	{"upstream/modern", layerUpstream, product, false},

	{"face/legacy", layerFace, product, false},
	{"face/modern", layerFace, product, false},

	{"router", layerRoot, product, false},
	{"internal/demo", layerRoot, product, false},

	{"internal/testkit", layerTestkit, testkit, false},
	{"sessionmap/storetest", layerTestkit, testkit, false},

	{"cmd", layerBinary, product, false},
	{"bench", layerBinary, tooling, false},
	{"interop", layerBinary, tooling, false},
	{"deploy", layerBinary, tooling, false},
	{"internal/archtest", layerBinary, tooling, false},
}

// ioImports are what a pure package must not import.
var ioImports = []string{"net", "net/http", "os", "os/exec", "github.com/modelcontextprotocol/go-sdk/mcp"}

// sdkMCP is go-sdk's server and client package: a pure package may use
// go-sdk's jsonrpc types but must not depend on this, even indirectly.
const sdkMCP = "github.com/modelcontextprotocol/go-sdk/mcp"

// pkgInfo is one package of the graph: its non-test imports and all its
// dependencies (transitive), as full import paths.
type pkgInfo struct {
	Imports []string
	Deps    []string
}

// graph maps a package's full import path to its imports. Packages of the
// module are those whose path starts with module.
type graph map[string]pkgInfo

// violation is one broken rule.
type violation struct {
	Rule     string // pure, layers, testkit, folders or placed
	From, To string // module-relative importer and imported package (To is empty for placed)
	Message  string
}

// rel returns p relative to the module, and whether p is in the module.
func rel(p string) (string, bool) {
	if p == module {
		return ".", true
	}
	if r, ok := strings.CutPrefix(p, module+"/"); ok {
		return r, true
	}
	return "", false
}

// rowOf returns the row that holds the module-relative package p.
func rowOf(p string) (row, bool) {
	var best row
	found := false
	for _, r := range layout {
		if (p == r.folder || strings.HasPrefix(p, r.folder+"/")) && (!found || len(r.folder) > len(best.folder)) {
			best, found = r, true
		}
	}
	return best, found
}

// check applies the layout's rules to g and returns the violations, sorted.
func check(g graph) []violation {
	var out []violation
	type folderPair struct{ from, to string }
	folderEdge := map[folderPair][2]string{} // first package edge seen between two rows

	paths := make([]string, 0, len(g))
	for p := range g {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, full := range paths {
		from, ok := rel(full)
		if !ok {
			continue
		}
		fr, ok := rowOf(from)
		if !ok {
			out = append(out, violation{Rule: "placed", From: from, Message: fmt.Sprintf(
				"%s is in no folder of the layout table (internal/archtest layout): add its folder there and to README.md's Layout table, with its layer (rule placed)",
				from)})
			continue
		}
		pkg := g[full]
		if fr.pure {
			for _, imp := range pkg.Imports {
				if slices.Contains(ioImports, imp) {
					out = append(out, violation{Rule: "pure", From: from, To: imp, Message: fmt.Sprintf(
						"%s imports %s: %s is a pure package and must do no I/O; take the data as a parameter and do the I/O in a caller (rule pure)",
						from, imp, from)})
				}
			}
			for _, dep := range pkg.Deps {
				if (dep == sdkMCP || strings.HasPrefix(dep, sdkMCP+"/")) && !slices.Contains(pkg.Imports, dep) {
					out = append(out, violation{Rule: "pure", From: from, To: dep, Message: fmt.Sprintf(
						"%s depends on %s through its imports: a pure package may use go-sdk's jsonrpc types only (rule pure)",
						from, dep)})
				}
			}
		}
		for _, imp := range pkg.Imports {
			to, ok := rel(imp)
			if !ok {
				continue
			}
			tr, ok := rowOf(to)
			if !ok {
				continue // reported as placed when the imported package is visited
			}
			if fr.pure && !tr.pure {
				out = append(out, violation{Rule: "pure", From: from, To: to, Message: fmt.Sprintf(
					"%s imports %s: %s is a pure package and may import only pure packages of this module (rule pure)",
					from, to, from)})
			}
			if tr.kind == testkit && fr.kind == product {
				out = append(out, violation{Rule: "testkit", From: from, To: to, Message: fmt.Sprintf(
					"%s imports the test kit %s: product code must not depend on test kits; use it from a _test.go file, or move what the product needs out of %s (rule testkit)",
					from, to, tr.folder)})
			}
			if fr.folder == tr.folder {
				continue
			}
			if tr.layer > fr.layer {
				out = append(out, violation{Rule: "layers", From: from, To: to, Message: fmt.Sprintf(
					"%s imports %s: an upward import (%s, layer %q, may import only lower layers than %q of %s); move the shared code down or invert the dependency (rule layers)",
					from, to, fr.folder, layerNames[fr.layer], layerNames[tr.layer], tr.folder)})
			}
			k := folderPair{fr.folder, tr.folder}
			if _, seen := folderEdge[k]; !seen {
				folderEdge[k] = [2]string{from, to}
			}
		}
	}
	pairs := make([]folderPair, 0, len(folderEdge))
	for k := range folderEdge {
		pairs = append(pairs, k)
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].from != pairs[j].from {
			return pairs[i].from < pairs[j].from
		}
		return pairs[i].to < pairs[j].to
	})
	for _, k := range pairs {
		back, ok := folderEdge[folderPair{k.to, k.from}]
		if !ok || k.from > k.to { // report each pair once
			continue
		}
		there := folderEdge[k]
		out = append(out, violation{Rule: "folders", From: there[0], To: there[1], Message: fmt.Sprintf(
			"folders %s and %s import each other (%s imports %s, %s imports %s); one of them must stop: move the shared code into the lower one or below both (rule folders)",
			k.from, k.to, there[0], there[1], back[0], back[1])})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Rule != out[j].Rule {
			return out[i].Rule < out[j].Rule
		}
		if out[i].From != out[j].From {
			return out[i].From < out[j].From
		}
		return out[i].To < out[j].To
	})
	return out
}
