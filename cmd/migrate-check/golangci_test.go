package main

import (
	"path/filepath"
	"testing"
)

// TestGolangciPluginBuilds compiles and tests the golangci-lint module plugin
// in its nested module (migratecheck/golangci), which keeps
// github.com/golangci/plugin-module-register out of the main go.mod.
func TestGolangciPluginBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a separate module")
	}
	r := runIn(t, filepath.Join("..", "..", "migratecheck", "golangci"), "go", "test", "-count=1", "./...")
	if r.code != 0 {
		t.Fatalf("golangci plugin module: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
