// Package inputrequired defines an Analyzer for MCP010: code that handles
// the input_required task status next to the removed tasks/result method,
// the 2025-11-25 way of answering elicitation/sampling for a task through a
// tasks/result side channel.
//
// # Analyzer inputrequired
//
// inputrequired: find input_required handled through tasks/result
//
// In every function that calls or dispatches tasks/result (a library
// identifier reported as MCP001 by passes/libapi, or an R1 hit of
// passes/rawmethods), each use of a string constant equal to
// "input_required" (mcp-go's mcp.TaskStatusInputRequired, mcpkit's
// core.TaskInputRequired, a literal …) is reported. With the extension,
// tasks/get returns inputRequests and the client answers with
// tasks/update{taskId, inputResponses}. The status value itself is unchanged
// and is never reported on its own.
package inputrequired
