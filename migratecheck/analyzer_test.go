package migratecheck_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/tasksbridge/tasksbridge/migratecheck"
)

// TestMCPGoCatalogue covers every catalogued mcp-go identifier (positives).
func TestMCPGoCatalogue(t *testing.T) {
	resetConfig(t)
	analysistest.Run(t, analysistest.TestData(), migratecheck.Analyzer, "example.com/mcpgouse")
}
