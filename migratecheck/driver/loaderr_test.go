package driver

import (
	"fmt"
	"testing"

	"golang.org/x/tools/go/packages"
)

// TestPackageErrorsCap: like the compiler, at most ten errors per package;
// the rest are counted.
func TestPackageErrorsCap(t *testing.T) {
	p := &packages.Package{PkgPath: "example.com/m/p"}
	for i := 1; i <= 15; i++ {
		p.Errors = append(p.Errors, packages.Error{Pos: fmt.Sprintf("/m/p/p.go:%d:2", i), Msg: "undefined: mcp", Kind: packages.TypeError})
	}
	got := packageErrors([]*packages.Package{p}, "/m", nil)
	if len(got) != 11 || got[10].Msg != "5 more errors" || got[0].String() != "p/p.go:1:2: undefined: mcp (package example.com/m/p)" {
		t.Errorf("got %d errors: %v", len(got), errorStrings(got))
	}
}

// TestExplainImport: the type checker's placeholder for an unresolved
// import is replaced by the go command's reason at the same position, and
// kept when go list gave none.
func TestExplainImport(t *testing.T) {
	causes := []*listError{{Pos: "a/a.go:3:8", Err: "example.com/x@v1.0.0: reading https://proxy.example/example.com/x/@v/v1.0.0.zip: 403 Forbidden\n"}}
	msg := `could not import example.com/x/y (invalid package name: "")`
	if got, want := explainImport(msg, "a/a.go:3:8", causes), "could not import example.com/x/y: example.com/x@v1.0.0: reading https://proxy.example/example.com/x/@v/v1.0.0.zip: 403 Forbidden"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := explainImport(msg, "a/a.go:4:8", causes); got != msg {
		t.Errorf("no cause at that position: got %q", got)
	}
}
