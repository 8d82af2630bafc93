package astq

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"testing"

	"golang.org/x/tools/go/ast/inspector"
)

// The cursor queries the passes share: string literals with their values,
// the climb through parentheses and conversions, and map keys.
func TestStringLitsOutermostMapKeys(t *testing.T) {
	const src = `package p

type key string
type meta map[key]int

var a = meta{(key("in-map")): 1}
var b = struct{ X string }{X: "in-struct"}
var c = map[string]int{}
var d = c[("indexed")]
var e = 7
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	if _, err := (&types.Config{Importer: importer.Default()}).Check("p", fset, []*ast.File{f}, info); err != nil {
		t.Fatal(err)
	}
	ins := inspector.New([]*ast.File{f})
	got := map[string]bool{}
	for cur, v := range StringLits(ins) {
		got[v] = MapLiteralKey(info, Outermost(info, cur))
	}
	want := map[string]bool{"in-map": true, "in-struct": false, "indexed": false}
	if len(got) != len(want) {
		t.Fatalf("StringLits yielded %v, want the keys of %v", got, want)
	}
	for v, isKey := range want {
		if got[v] != isKey {
			t.Errorf("%q: MapLiteralKey(Outermost) = %v, want %v", v, got[v], isKey)
		}
	}
	// "indexed" climbs out of its parentheses to the index of a map.
	for cur, v := range StringLits(ins) {
		if v != "indexed" {
			continue
		}
		ix, ok := Outermost(info, cur).Parent().Node().(*ast.IndexExpr)
		if !ok || !IsMap(info, ix.X) {
			t.Errorf("Outermost of %q is not the index of a map", v)
		}
	}
}
