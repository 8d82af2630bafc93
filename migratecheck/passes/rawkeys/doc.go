// Package rawkeys defines an Analyzer for the hand-written JSON side of
// rules R2, R4 and R5 of the rules catalogue: legacy keys read from or
// written to raw maps (map[string]any decoded from or encoded to JSON).
//
// # Analyzer rawkeys
//
// rawkeys: find legacy MCP task keys read from or written to raw JSON maps
//
// Within one function, a string-keyed map is judged by the keys it is
// indexed with (or, for a literal, the keys it has):
//
//   - a task object (indexed with "taskId" or "status" too) read or written
//     under "ttl" (MCP006) or "pollInterval" (MCP007);
//   - tools/call params (indexed with "name" or "arguments" too) read under
//     "task" (MCP005; assignments are rule R5 in passes/taskparams);
//   - capabilities (indexed with another capability key, or a variable whose
//     name says so) read under "tasks" (MCP004).
//
// A map indexed only with "ttl" (a cache or a config) is not a task. A
// storage package (by name or database client) that shows no JSON-RPC task
// method is not reported: it reads back what it persisted. In a package that
// serves both eras the root analyzer lowers the findings to notes (a legacy
// to extension conversion reads the legacy keys on purpose).
package rawkeys
