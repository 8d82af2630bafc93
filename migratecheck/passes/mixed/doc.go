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
// CreateTaskResult (R3, passes/nestedresult), or a server-side legacy
// capabilities.tasks declaration (R4, catalogued capability slots). A
// method handed to another package's function without a handler of its own
// (a CLI calling a library's router.Handle(ctx, "tasks/list", nil)) is that
// package's engine, not evidence here. Each advertisement is reported with
// the evidence as related information.
//
// Across the packages of a module, a package Fact records whether a package
// advertises the extension, runs a legacy engine or implements the
// extension. A package with legacy evidence that imports (directly or not)
// a package of the same module that advertises gets MCP014 at its first
// evidence; a package that advertises and imports one with a legacy engine
// gets MCP014 at its advertisements. The reported evidence is the first by
// file name, line and column, and the advertising package named is the
// first by import path, so every run reports the same position. Without module information, a
// catalogued library's packages count as another module unless the
// analysed package belongs to the same library.
//
// A dual stack is exempt: the package or one of its module's imported
// packages imports a FamilyModern library (a real implementation of the
// extension, such as mcpkit's ext/tasks), uses the extension-only method
// "tasks/update", builds results with resultType "task" or answers -32021
// (passes/era). MCP014 stays an error in dual mode.
package mixed
