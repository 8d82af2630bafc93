// Package taskparams defines an Analyzer for rule R5 of the rules catalogue:
// the 2025-11-25 per-request task parameter params.task (MCP005) built
// without a catalogued library, and its server-to-client variant on
// sampling/createMessage and elicitation/create (client-hosted tasks,
// MCP013).
//
// # Analyzer taskparams
//
// taskparams: find the removed per-request params.task
//
// Reported:
//   - a map literal with the keys "name", "arguments" and "task" (tools/call
//     params): MCP005 at "task";
//   - an index assignment params["task"] = … where params also receives
//     "name" or "arguments" in the same function (by index assignment or in
//     its initialising map literal): MCP005;
//   - a struct with the JSON keys name, arguments and task: MCP005 at the
//     task field;
//   - a map literal or index assignment adding "task" to
//     sampling/createMessage params (keys messages and maxTokens) or
//     elicitation/create params (keys message and requestedSchema): MCP013.
package taskparams
