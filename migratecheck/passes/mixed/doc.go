// Package mixed defines an Analyzer for rule R8 of the rules catalogue,
// MCP014: a package that advertises the io.modelcontextprotocol/tasks
// extension while its task engine is still the 2025-11-25 one.
//
// # Analyzer mixed
//
// mixed: find extension advertisements next to a legacy task engine
//
// The advertisement sites come from passes/capabilities. Legacy engine
// evidence in the same package is any of: a catalogued library engine
// identifier (mcp-go WithTaskCapabilities, AddTaskTool, WithTaskHooks,
// mcpkit RegisterTasksV1, …; passes/libapi), a server-side R1 hit (a
// tasks/result or tasks/list dispatcher, passes/rawmethods), or a nested
// CreateTaskResult (R3, passes/nestedresult). Each advertisement is reported
// with the evidence as related information. The check is per package. A
// package with a modern engine of its own is a legitimate dual stack and is
// exempt: it imports a FamilyModern library (a real implementation of the
// extension, such as mcpkit's ext/tasks), or it uses the extension-only
// method "tasks/update", or it builds results with resultType "task".
// MCP014 stays an error in dual mode.
package mixed
