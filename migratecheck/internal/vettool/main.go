// Command vettool is a minimal unitchecker binary that migratecheck's tests
// build to exercise go vet -vettool mode (facts, flags and suppression across
// separately analyzed packages). The user-facing driver is cmd/migrate-check.
package main

import (
	"golang.org/x/tools/go/analysis/unitchecker"

	"github.com/tasksbridge/tasksbridge/migratecheck"
)

func main() { unitchecker.Main(migratecheck.Analyzers()...) }
