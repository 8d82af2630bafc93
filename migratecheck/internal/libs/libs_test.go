package libs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRequiredVersion(t *testing.T) {
	root := t.TempDir()
	mod := "module example.com/app\n\ngo 1.24\n\nrequire (\n\tgithub.com/mark3labs/mcp-go v0.47.0\n\tgithub.com/tmc/mcp v0.0.0-20260703000000-6d9800f7aaaa\n)\n\n" +
		"replace github.com/tmc/mcp => ../fork\n"
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "internal", "srv")
	for _, c := range []struct{ pkg, prefix, want string }{
		{"example.com/app/internal/srv", "github.com/mark3labs/mcp-go", "v0.47.0"},
		{"example.com/app/internal/srv", "github.com/tmc/mcp", ""},         // replaced by a directory: unknown
		{"example.com/app/internal/srv", "github.com/finemcp/finemcp", ""}, // not required
		{"example.com/other/srv", "github.com/mark3labs/mcp-go", ""},       // a go.mod of another module
	} {
		if got := RequiredVersion(dir, c.pkg, c.prefix); got != c.want {
			t.Errorf("RequiredVersion(%s, %s) = %q, want %q", c.pkg, c.prefix, got, c.want)
		}
	}
	if !AtLeast("v1.2.1", "v1.0.0-beta.1") || AtLeast("v0.47.0", "v1.0.0") || AtLeast("", "v1.0.0") {
		t.Error("AtLeast compares semantic versions and treats unknown as older")
	}
}
