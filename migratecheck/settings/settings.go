// Package settings is migrate-check's one configuration package:
//
//   - Settings: the user-tunable configuration as plain data, independent of
//     where it comes from (config file, command-line flags, golangci-lint
//     settings), with its defaults and validation (settings.go);
//   - Config: the on-disk .migrate-check.yaml / .json file, found by
//     FindConfig and read strictly by LoadConfig (file.go);
//   - Resolve: the defaults, the file and the command-line Overrides merged
//     (flags win) into a Resolved configuration with per-rule severities,
//     fail_on and tests (resolve.go);
//   - Snapshot: the analyzers' effective configuration behind the flags of
//     the root "migratecheck" analyzer, read by the passes with Current
//     (flags.go).
//
// migratecheck.Configure turns a Settings into the analyzer flag values, so
// go vet -vettool mode sees the same configuration.
package settings

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
)

// Library families understood by the analyzers (keys of Settings.Libraries).
const (
	FamilyMCPGo     = "mcpgo"     // github.com/mark3labs/mcp-go (packages mcp, server, client)
	FamilyGoSDK     = "gosdk"     // github.com/modelcontextprotocol/go-sdk (feature probe only: no legacy tasks API)
	FamilyMCPKit    = "mcpkit"    // github.com/panyam/mcpkit (the *V1 API; packages server, client, core)
	FamilyFineMCP   = "finemcp"   // github.com/finemcp/finemcp (root package and client)
	FamilyAppTheory = "apptheory" // github.com/theory-cloud/apptheory[/v3] (package runtime/mcp)
	FamilyTMC       = "tmcmcp"    // github.com/tmc/mcp (root package)
	// FamilyModern lists packages whose presence means the package runs a real
	// implementation of the tasks extension, which silences MCP014 (mixed
	// advertisement) for it.
	FamilyModern = "modern"
)

// Families returns the known family names in a stable order.
func Families() []string {
	return []string{FamilyMCPGo, FamilyGoSDK, FamilyMCPKit, FamilyFineMCP, FamilyAppTheory, FamilyTMC, FamilyModern}
}

// Targets.
const (
	// TargetDual: the code must keep serving 2025-11-25 peers while adding the
	// extension. Server-side MCP004/MCP005 findings are lowered to info.
	TargetDual = "dual"
	// TargetExtensionOnly: 2025-11-25 peers are no longer served; every finding
	// keeps its rule severity.
	TargetExtensionOnly = "extension-only"
)

// Settings configures the analyzers.
type Settings struct {
	// Libraries maps a family (FamilyMCPGo, …) to module path prefixes. A
	// package belongs to a family when its path equals a prefix plus the
	// family's sub-package (e.g. prefix + "/mcp"); for FamilyModern any
	// package at or below a prefix counts. Forks add their own prefixes
	// (list the default too to keep it). A family absent from the map keeps
	// its default prefixes; a family present with an empty list is disabled.
	Libraries map[string][]string
	// MethodCallFuncs are the function or method names whose first string
	// argument is a JSON-RPC method name (R1 position 4). A trailing "*"
	// matches any suffix ("SendNotification*").
	MethodCallFuncs []string
	// Target is TargetDual or TargetExtensionOnly.
	Target string
	// Enabled switches rules on (true) or off (false) by ID; absent rules are
	// enabled. MCP000 cannot be disabled.
	Enabled map[string]bool
	// FixTags opts into the MCP006/MCP007 struct-tag rename fix; FixLiterals
	// into the MCP003 "notifications/tasks/status" literal rename.
	FixTags, FixLiterals bool
}

// DefaultMethodCallFuncs is the R1 call-name list of the rules catalogue.
func DefaultMethodCallFuncs() []string {
	return []string{"Call", "CallRaw", "SendRequest", "Request", "Notify", "SendNotification*",
		"HandleMethod", "Handle", "RegisterMethod", "On", "AddNotificationHandler"}
}

// DefaultLibraries returns the library prefixes of the library API table
// (migratecheck/internal/catalog).
func DefaultLibraries() map[string][]string {
	return map[string][]string{
		FamilyMCPGo:     {"github.com/mark3labs/mcp-go"},
		FamilyGoSDK:     {"github.com/modelcontextprotocol/go-sdk"},
		FamilyMCPKit:    {"github.com/panyam/mcpkit"},
		FamilyFineMCP:   {"github.com/finemcp/finemcp"},
		FamilyAppTheory: {"github.com/theory-cloud/apptheory", "github.com/theory-cloud/apptheory/v3"},
		FamilyTMC:       {"github.com/tmc/mcp"},
		FamilyModern:    {"github.com/panyam/mcpkit/ext/tasks"},
	}
}

// Default returns the zero-config settings: all catalogue libraries, the
// default call-name list, dual target, every rule enabled, no fixes.
func Default() Settings {
	return Settings{
		Libraries:       DefaultLibraries(),
		MethodCallFuncs: DefaultMethodCallFuncs(),
		Target:          TargetDual,
		Enabled:         map[string]bool{},
	}
}

// Validate reports unknown families, targets and rule IDs.
func (s Settings) Validate() error {
	for fam, prefixes := range s.Libraries {
		if !slices.Contains(Families(), fam) {
			return fmt.Errorf("settings: unknown library family %q (known: %s)", fam, strings.Join(Families(), ", "))
		}
		for _, p := range prefixes {
			if p == "" || strings.ContainsAny(p, " ,;=") || strings.HasSuffix(p, "/") {
				return fmt.Errorf("settings: library %s: invalid path prefix %q", fam, p)
			}
		}
	}
	for _, f := range s.MethodCallFuncs {
		name := strings.TrimSuffix(f, "*")
		if name == "" || strings.ContainsAny(name, " ,*") {
			return fmt.Errorf("settings: invalid method call function name %q", f)
		}
	}
	switch s.Target {
	case TargetDual, TargetExtensionOnly, "":
	default:
		return fmt.Errorf("settings: target %q: want %q or %q", s.Target, TargetDual, TargetExtensionOnly)
	}
	for id := range s.Enabled {
		if _, ok := rules.Lookup(id); !ok {
			return fmt.Errorf("settings: unknown rule %q", id)
		}
		if strings.EqualFold(id, rules.DirectiveID) && !s.Enabled[id] {
			return fmt.Errorf("settings: rule %s (suppression directives) cannot be disabled", rules.DirectiveID)
		}
	}
	return nil
}

// RuleEnabled reports whether the rule with the given ID is enabled.
func (s Settings) RuleEnabled(id string) bool {
	for k, v := range s.Enabled {
		if strings.EqualFold(k, id) {
			return v
		}
	}
	return true
}
