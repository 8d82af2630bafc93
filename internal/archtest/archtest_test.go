// Package archtest checks the architecture rules that the compiler does not:
// the wire and translation packages stay pure (no I/O, no go-sdk mcp package).
package archtest

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

var forbidden = []string{"net/http", "os", "os/exec", "net", "github.com/modelcontextprotocol/go-sdk/mcp"}

func TestPurePackagesDoNoIO(t *testing.T) {
	for _, pkg := range []string{"era", "legacy", "modern", "translate", "translate/waitrule"} {
		out, err := exec.Command("go", "list", "-json", "github.com/tasksbridge/tasksbridge/"+pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		var info struct{ Imports, Deps []string }
		if err := json.Unmarshal(out, &info); err != nil {
			t.Fatalf("decode go list %s: %v", pkg, err)
		}
		for _, imp := range info.Imports {
			for _, bad := range forbidden {
				if imp == bad {
					t.Errorf("package %s imports %s; it must stay free of I/O (docs/ARCHITECTURE.md, Layout rule: imports run one way)", pkg, imp)
				}
			}
		}
		for _, dep := range info.Deps {
			if strings.HasPrefix(dep, "github.com/modelcontextprotocol/go-sdk/mcp") {
				t.Errorf("package %s depends on %s; only go-sdk's jsonrpc types are allowed", pkg, dep)
			}
		}
	}
}
