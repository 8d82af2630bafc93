// Package face is the bridge's legacy face: it serves MCP 2025-11-25 clients,
// including their experimental tasks (tasks/get, the blocking tasks/result,
// tasks/list, tasks/cancel), in front of a modern 2026-07-28 server that
// speaks the io.modelcontextprotocol/tasks extension (modern-tasks.md §5).
//
// # Shape
//
// A Bridge (New) owns the upstream client (modern/upstream), the durable
// index (sessionmap), one watcher per upstream task (internal/watch) and the
// legacy sessions. Each legacy session is served by its own go-sdk mcp.Server
// whose receiving middleware does the translation (translate) and whose custom
// methods implement tasks/*. Over HTTP those servers sit behind go-sdk's
// stateful StreamableHTTPHandler, wrapped by the bridge's own http.Handler
// (Handler), which adds what the SDK lacks:
//
//   - a session map of its own: a request whose Mcp-Session-Id the process
//     does not know, but the store does (a restart), is rehydrated by
//     replaying the stored initialize (and log level) into a fresh go-sdk
//     session under the same id, then served — the client never
//     re-initializes (issue 4 item 9; go-sdk.md §7.3);
//   - the request body is read once (size limit → 413) and the raw params
//     are handed to the middleware through a per-request record, because
//     go-sdk's typed params drop members such as tools/call "task" (go-sdk.md
//     §6);
//   - Host and Origin checks against DNS rebinding (403);
//   - SSE comment keep-alives on long tools/call and tasks/result streams,
//     and plain application/json answers for tasks/get, tasks/list and
//     tasks/cancel (L-40: no SSE where it is not needed).
//
// ServeStdio serves one legacy client over a byte stream with the same
// server code.
//
// # Why not a raw StreamableServerTransport
//
// go-sdk.md §7.3 sketches rehydration with StreamableServerTransport and
// ServerSessionOptions.State. That works for standard methods only: a
// transport connected outside StreamableHTTPHandler has no server reference
// (go-sdk v1.8.0 sets it in an unexported helper), so the transport rejects
// every custom method (tasks/*) with a plain-text HTTP 400 before the server
// sees it. Replaying initialize through the SDK handler gives the same result
// (a go-sdk session under the old id, initialized with the stored params)
// using exported API only, and keeps every SDK behaviour of the handler.
//
// # Task flows
//
// tools/call with "task": the upstream creates a task → the record is made
// durable in sessionmap first → the client gets a nested CreateTaskResult
// (L-12, README fact 7). A synchronous upstream answer becomes a synthesized,
// already completed task. A call without "task" that the upstream turns into a
// task is polled internally. tasks/get is served from the watcher's cache
// (never more often upstream than pollInterval); tasks/result blocks on the
// shared watcher and relays input requests as real elicitation/create,
// sampling/createMessage and roots/list requests on its own stream, each key
// answered upstream exactly once (answered keys persisted first). An input
// request the client did not declare a capability for is never relayed
// (L-82) nor waited on: the task fails at once, naming the capability
// (undeclared.go). tasks/list reads sessionmap; tasks/cancel pins cancelled
// before replying, and the upstream tasks/cancel it owes is recorded with
// the pin and delivered by an outbox that retries until the upstream takes
// it, in this process or the next (outbox.go, L-57). Task creation, cancels,
// input answers, result deliveries and task ends go to Config.Audit
// (audit.go, L-79, L-80).
//
// # Scope
//
// The principal is the SHA-256 of the request's Authorization header
// (sessionmap.PrincipalFromAuthorization) when there is one, else the
// session. Every task read goes through the scope check, and a foreign id is
// answered exactly like an unknown one (-32602, README fact 10). Without an
// Authorization header, tasks/list is scoped to the session: after a restart
// the same session (same Mcp-Session-Id) still sees its tasks, but a new
// session does not (L-04, L-71). Task ids are 144-bit random values either
// way (L-70).
package face
