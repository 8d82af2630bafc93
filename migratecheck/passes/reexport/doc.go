// Package reexport defines an Analyzer that exports facts about user
// wrappers that re-declare catalogued library objects, so that uses of the
// wrappers in other packages are reported too.
//
// # Analyzer reexport
//
// reexport: facts for wrappers that re-export legacy MCP task library objects
//
// A wrapper package often re-exports mcp-go with type aliases (which resolve
// to the library object by themselves) and with re-declared constants,
// variables and thin functions, which are new objects:
//
//	const TaskSupportRequired = mcp.TaskSupportRequired
//	var EnableTasks = server.WithTaskCapabilities
//	func Tasks() server.ServerOption { return server.WithTaskCapabilities(false, true, true) }
//
// For each such package-level declaration whose value (or single returned
// call) resolves to a catalogued object, or to another wrapper with a fact,
// the analyzer exports a *Fact naming the catalogue entry. Its Result maps
// the objects used by the current package that carry such a fact to their
// entries; passes/libapi reports those uses.
//
// Accessors get a fact too: a function (of any package, exported or not)
// whose return statements yield or test a catalogued per-request task field
// (MCP005: req.Params.Task, its TTL), directly, through a local variable or
// through another accessor, such as a "has task params" or "extract task
// ttl" helper. Calls of it, in its own package and in importers, are
// reported as reads of that field. The analyzer reports nothing.
package reexport
