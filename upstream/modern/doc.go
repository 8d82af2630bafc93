// Package modernup is the bridge's client towards a modern MCP server
// (2026-07-28 + the io.modelcontextprotocol/tasks extension): raw JSON-RPC
// over go-sdk's transports (Streamable HTTP or a stdio command), so that a
// CreateTaskResult, an MRTR input request or an exact error body is never lost
// (docs/ARCHITECTURE.md, What go-sdk v1.8.0 leaves to the bridge).
//
// Every request carries the per-request _meta (M-01, M-02, M-20) and, on HTTP,
// the MCP-Protocol-Version / Mcp-Method / Mcp-Name headers including
// Mcp-Name = taskId on tasks/* (M-10, M-32). Upstream JSON-RPC errors come
// back unchanged as *rpc.Error; transport failures are -32603 errors that name
// the upstream and match ErrUnavailable (retryable) or ErrBadResponse.
package modernup
