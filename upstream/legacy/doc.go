// Package legacyup is the bridge's client towards a legacy MCP server
// (2025-11-25 with experimental tasks): a Pool of initialized go-sdk client
// sessions, one per principal, each opened with mcp.Client pinned to
// 2025-11-25 and re-initialized when the upstream session dies.
//
// go-sdk has no legacy tasks client, and its ClientSession drops what the
// bridge needs most (the "task" request member, the nested CreateTaskResult,
// the legacy tasks capability, server→client requests correlated by JSON-RPC
// id). So the go-sdk session does the initialize handshake, and every request
// the bridge makes is sent raw on that session (Session.Call):
//
//   - Streamable HTTP: each call is its own POST carrying the session's
//     Mcp-Session-Id and MCP-Protocol-Version: 2025-11-25, so every message on
//     its response stream (a server→client request such as the elicitation a
//     task sends on the blocking tasks/result stream, a progress notification,
//     the response) belongs to that call. A 404 for the session marks it dead
//     (ErrSessionGone); a stream that ends without a response is an error,
//     never a hang.
//   - stdio (CommandTransport, or any mcp.Transport): calls are multiplexed on
//     the go-sdk connection under string ids the SDK never uses; server→client
//     requests are routed by their related-task _meta
//     ("io.modelcontextprotocol/related-task", L-33), else to
//     the one in-flight call that accepts them. The process exiting ends the
//     session.
//
// Server→client requests (elicitation/create, sampling/createMessage,
// roots/list) are handed to the call's OnRequest as SideRequest values; the
// caller answers them whenever it likes with Session.Respond, correlated by
// the upstream's JSON-RPC id (L-84: legacy clients correlate answers by id,
// they do not echo related-task _meta).
//
// Errors: a JSON-RPC error the upstream sent comes back unchanged as
// *rpc.Error; a transport failure is an *Error (-32603 naming the upstream)
// that matches ErrUnavailable (retryable), ErrSessionGone or ErrBadResponse.
//
// Whether an upstream is legacy or modern is decided (and cached) by the
// era package, for the router that serves both.
package legacyup
