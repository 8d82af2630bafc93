// Package migratecheck finds Go code that depends on the MCP 2025-11-25
// experimental tasks surface removed or changed by the
// io.modelcontextprotocol/tasks extension (SEP-2663, MCP 2026-07-28), and
// explains the rewrite. Its one job is to provide the analyzers; the
// cmd/migrate-check driver, SARIF output and the golangci-lint plugin live
// elsewhere.
//
// # Analyzer: migratecheck
//
// migratecheck: report uses of removed MCP legacy task APIs (MCP001–MCP015)
//
// Analyzers returns a single root analyzer, "migratecheck". It requires one
// sub-analyzer per concern (package passes/…) and is the only analyzer that
// reports:
//
//	passes/libapi        library identifiers of mcp-go, mcpkit, finemcp, apptheory and tmc/mcp, resolved by object
//	passes/reexport      facts for user wrappers that re-declare library objects
//	passes/rawmethods    R1: "tasks/result", "tasks/list", "notifications/tasks/status" in JSON-RPC method position
//	passes/tasktags      R2: ttl/pollInterval tags in task-shaped structs; the TaskMetadata {ttl} shape
//	passes/nestedresult  R3: nested CreateTaskResult decoding and encoding
//	passes/capabilities  R4: capabilities.tasks; also finds io.modelcontextprotocol/tasks advertisements
//	passes/taskparams    R5: params.task on tools/call; MCP013 task-augmented sampling/elicitation params
//	passes/tasksupport   R6: execution.taskSupport
//	passes/metakeys      R7: legacy _meta keys
//	passes/rawkeys       R2/R4/R5 on raw JSON maps: task ttl/pollInterval, params["task"], caps["tasks"] reads and writes
//	passes/inputrequired MCP010: input_required handled through tasks/result
//	passes/mixed         R8: MCP014, extension advertised next to a legacy task engine (facts across the module)
//	passes/era           code that already serves both eras (branches on the protocol version, dual stack)
//
// Library packages are analysed like any code. A finding in code that
// already serves both eras is lowered to info with a note saying so, and
// carries no fix.
//
// Every diagnostic has Category = rule ID (MCP001…, MCP000 for directives),
// URL = the rule's HelpURI, and a Message that starts with a human sentence.
// If a diagnostic's effective severity differs from its rule's default, the
// message ends with " [info]", " [warning]" or " [error]"; SeverityOf decodes
// it. The Result of the root analyzer is a *Report listing every finding,
// including suppressed ones.
//
// # Flags
//
// All configuration is carried by the root analyzer's flags, so the same
// settings work as -migratecheck.<flag>=… under multichecker and
// go vet -vettool; Configure sets them from a settings.Settings:
//
//	-migratecheck.libraries=family=prefix,...  library path prefixes (families mcpgo, gosdk, mcpkit,
//	                                           finemcp, apptheory, tmcmcp, modern). Listing a family
//	                                           replaces its defaults; "family=" disables it; unlisted
//	                                           families keep their defaults.
//	-migratecheck.method-call-funcs=Call,...   R1 call names whose first string argument is a method
//	                                           name; a trailing * matches a prefix.
//	-migratecheck.target=dual|extension-only   dual (default): server-side MCP004/MCP005 are info.
//	-migratecheck.rules=all,-MCP011            enabled rules; "MCP001,MCP002" runs only those.
//	-migratecheck.fix-tags                     attach MCP006/MCP007 tag rename fixes (default false).
//	-migratecheck.fix-literals                 attach the MCP003 literal rename fix (default false).
//
// # Suppression
//
//	//migrate-check:ignore MCP001[,MCP002] reason   on the finding's line or the line above it
//	//migrate-check:file-ignore MCP006 reason       anywhere in the file
//	//lint:ignore MCP001 reason                     staticcheck spelling (also lint:file-ignore)
//	//nolint:migratecheck                           golangci-lint spelling (also bare //nolint and //nolint:all)
//
// A migrate-check or lint directive without a reason, or naming an unknown
// rule, is reported as MCP000 (error) and suppresses nothing. A well-formed
// directive that suppressed nothing is reported as MCP000 at warning level
// ("this directive matched nothing; remove it?"), unless all its rules are
// disabled. nolint directives are never reported as unused (golangci-lint's
// nolintlint does that).
//
// # Fixes
//
// Only the fixes docs/rules/README.md ("Fixes") allows exist, and only when opted in:
// MCP006/MCP007 json tag renames in task-shaped wire structs whose tags have
// only json keys, in packages that neither serve nor talk to 2025-11-25 peers
// (-migratecheck.fix-tags), and the MCP003 "notifications/tasks/status" →
// "notifications/tasks" raw literal rename when the package does not already
// emit the new name and does not serve 2025-11-25 peers either
// (-migratecheck.fix-literals). The guard is computed by the analysis
// (rawmethods.Result.ServesLegacy) from the package's own evidence, never
// from its library family; drivers only apply the fixes attached. Findings in generated files
// (ast.IsGenerated) and under vendor/ are still reported but never carry a
// fix. Fixes are minimal in-literal edits and idempotent: the fixed code is
// not flagged again. Drivers must gofmt after applying (a longer tag can
// shift the alignment of trailing comments).
package migratecheck

const doc = `report uses of removed MCP legacy task APIs (MCP001–MCP015)

migratecheck finds Go code that depends on the MCP 2025-11-25 experimental
tasks surface (tasks/result, tasks/list, notifications/tasks/status,
capabilities.tasks, params.task, execution.taskSupport, nested
CreateTaskResult, ttl/pollInterval, legacy _meta keys) that the
io.modelcontextprotocol/tasks extension removed or changed, in library APIs
(mark3labs/mcp-go and others, matched by resolved object) and in raw JSON-RPC
code. Suppress with //migrate-check:ignore MCPxxx reason.`
