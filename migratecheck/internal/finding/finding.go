// Package finding is the currency between migrate-check's sub-analyzers and
// the root analyzer: each sub-analyzer returns a *Result listing candidate
// findings, and the root applies rule enablement, the dual-target severity
// policy, fix opt-in and suppression before reporting them.
package finding

import (
	"go/token"

	"golang.org/x/tools/go/analysis"

	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
)

// Side says which peer role the flagged code plays. It drives the dual-target
// policy: server-side MCP004/MCP005 findings are info while 2025-11-25 peers
// are still served.
type Side int

// Sides.
const (
	SideUnknown Side = iota
	SideServer
	SideClient
)

// Fix kinds gate SuggestedFixes behind the opt-in flags.
const (
	FixTags     = "tags"     // -migratecheck.fix-tags
	FixLiterals = "literals" // -migratecheck.fix-literals
)

// Finding is one candidate diagnostic.
type Finding struct {
	Pos, End token.Pos
	Rule     string         // rule ID, e.g. "MCP001"
	Message  string         // human sentence(s), without the rule ID
	Level    rules.Severity // "" = the rule's default severity
	Side     Side
	// Fix is attached only if FixKind's opt-in flag is set and the file is
	// neither generated nor vendored.
	Fix     *analysis.SuggestedFix
	FixKind string
	Related []analysis.RelatedInformation
	// Key records what matched: a library table key such as
	// "mcpgo:mcp.MethodTasksResult", or a raw rule such as "R1".
	Key string
	// Subject is the qualified name of the named type a Fix edits
	// ("example.com/wire.Task"), so that a driver can withhold the fix when
	// another package still serves 2025-11-25 with that type.
	Subject string
}

// Result is the ResultType of every finding-producing sub-analyzer.
type Result struct {
	Findings []Finding
}

// Add appends a finding.
func (r *Result) Add(f Finding) { r.Findings = append(r.Findings, f) }

// All returns the findings; it makes *Result (and results embedding it) a
// Source.
func (r *Result) All() []Finding { return r.Findings }

// Source is implemented by every finding-producing sub-analyzer's result.
type Source interface{ All() []Finding }
