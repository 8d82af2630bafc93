// Package modern holds the wire types of MCP 2026-07-28 and the
// io.modelcontextprotocol/tasks extension (the "modern" era): per-request
// _meta, server/discover, resultType, flat CreateTaskResult, DetailedTask,
// tasks/get|update|cancel, input requests and responses, notifications/tasks,
// subscriptions/listen, the era's error codes and the Mcp-* header rules.
// Decoding is lenient, encoding strict. The package does no I/O.
package modern
