package migratecheck_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/tasksbridge/tasksbridge/migratecheck"
)

// TestMCPGoCatalogue covers every catalogued mcp-go identifier (positives).
func TestMCPGoCatalogue(t *testing.T) {
	resetConfig(t)
	analysistest.Run(t, analysistest.TestData(), migratecheck.Analyzer, "example.com/mcpgouse", "example.com/mcpkituse", "example.com/fineuse", "example.com/apptheoryuse", "example.com/tmcuse", "example.com/raw/r1", "example.com/raw/a2a", "example.com/raw/r2", "example.com/raw/r3", "example.com/raw/r4", "example.com/raw/r5", "example.com/raw/r6", "example.com/raw/r7", "example.com/raw/mcp010", "example.com/raw/migrated")
}
