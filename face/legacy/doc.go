// Package legacyface is the bridge's legacy face: it serves MCP 2025-11-25 clients,
// including their experimental tasks (tasks/get, the blocking tasks/result,
// tasks/list, tasks/cancel), in front of a modern 2026-07-28 server that
// speaks the io.modelcontextprotocol/tasks extension (docs/ARCHITECTURE.md,
// The four paths).
//
// # Shape
//
// A Bridge (New) owns the upstream client (upstream/modern), the durable
// index (sessionmap), one watcher per upstream task (runtime/watch) and the
// session table. Over HTTP, Handler is the bridge's own endpoint:
//
//   - Sessions are records, not servers (sessions.go): a session is its
//     store record plus a small table entry, with no goroutine and no go-sdk
//     server while it is idle. initialize is answered without go-sdk (the
//     version negotiated as go-sdk does, the result from the upstream's
//     server/discover, the record durable before the reply). A session the
//     table does not know is loaded from the store on its first request
//     (after a restart, or when another process created it): the client
//     never re-initializes. The table is bounded (Config.MaxSessions: 503
//     and a JSON-RPC error beyond it) and enforces the idle timeout while
//     the bridge runs (404 after it, the entry and record released). Only
//     the most recently used idle sessions stay whole; older ones are
//     dormant, a few dozen bytes each, and loaded back in place (dormant.go).
//   - The lean path (lean.go) serves tools/call, tools/list, tasks/get,
//     tasks/list, tasks/cancel, tasks/result, ping and notifications: each
//     body is read and decoded once, the handler runs, and the answer is
//     written straight onto the response with pooled buffers, as
//     application/json, or as an event stream once something must go out
//     first (a progress or log notification, an elicitation/create,
//     sampling/createMessage or roots/list request with its answer coming
//     back as a POST of its own, a prime, a keep-alive). L-40: tasks/get
//     and its kin never need a stream.
//   - Everything else (the standalone GET stream, subscriptions, prompts,
//     resources, completion, logging/setLevel, batches) is served by a
//     go-sdk mcp.Server per session behind go-sdk's StreamableHTTPHandler.
//     A session gets that go-sdk half on the first such request, by
//     replaying its stored initialize (and log level) into a fresh go-sdk
//     session under the same id, and loses it again when go-sdk's idle
//     timeout (Config.LiveSessionTimeout) ends it. The handler adds what the
//     SDK lacks: the raw params handed to the middleware through a
//     per-request record (go-sdk's typed params drop members such as
//     tools/call "task"), and Host and Origin checks against DNS rebinding
//     (403).
//   - One keep-alive ticker per process (keepalive.go) writes SSE comments
//     on every long stream and paces the progress of waits (L-63); a wait
//     holds no goroutine or timer of its own (context.AfterFunc).
//   - A tasks/result over HTTP/1 that blocks, or a plain tools/call
//     waiting on the task the upstream made of it, parks (parked.go): it
//     takes its connection over (Hijack), net/http's goroutine and buffers
//     go, and one hub per task answers all its parked waits from the task's
//     watcher; the keep-alive ticker notices a client gone (its close, or a
//     failed write). Response wrappers follow through ResponseDetacher (the
//     wire meter of router). HTTP/2, stdio and a wait with work of
//     its own (questions to present, progress to send) keep the blocking
//     wait.
//   - Per-principal limits (limits.go, L-72, L-73) bound the calls and
//     waits one client has in flight.
//
// ServeStdio serves one legacy client over a byte stream with the go-sdk
// server code.
//
// # Why replay initialize instead of a raw StreamableServerTransport
//
// A transport connected outside StreamableHTTPHandler has no server
// reference (go-sdk v1.8.0 sets it in an unexported helper), so the
// transport rejects every custom method (tasks/*) with a plain-text HTTP 400
// before the server sees it. Replaying initialize through the SDK handler
// gives a go-sdk session under the old id, initialized with the stored
// params, using exported API only.
//
// # Task flows
//
// tools/call with "task": the upstream creates a task → the record is made
// durable in sessionmap first → the client gets a nested CreateTaskResult
// (L-12: durable before the reply). A synchronous upstream answer becomes a synthesized,
// already completed task. A call without "task" that the upstream turns into a
// task is polled internally. tasks/get is served from the watcher's cache
// (never more often upstream than pollInterval); tasks/result blocks on the
// shared watcher and relays input requests as real elicitation/create,
// sampling/createMessage and roots/list requests on its own stream, each key
// answered upstream exactly once: the key and the client's answer are
// persisted in one write, and a key whose answer is stored is never asked
// again, also after a restart (M-30). An input
// request the client did not declare a capability for is never relayed
// (L-82) nor waited on: the task fails at once, naming the capability
// (undeclared.go). tasks/list reads sessionmap; tasks/cancel pins cancelled
// before replying, and the upstream tasks/cancel it owes is recorded with
// the pin. Both side effects the bridge owes the upstream, that cancel and
// each stored answer (a tasks/update with its key), are delivered by an
// outbox that retries with backoff until the upstream acknowledges them or
// the task is over, in this process or the next; credentials are never
// stored, so a task with a principal gets its debts delivered with the
// owner's next request (outbox.go, L-57, M-28). Task creation, cancels,
// input answers, result deliveries and task ends go to Config.Audit
// (audit.go, L-79, L-80).
//
// # Scope
//
// The principal is the SHA-256 of the request's Authorization header
// (sessionmap.PrincipalFromAuthorization) when there is one, else the
// session. Every task read goes through the scope check, and a foreign id is
// answered exactly like an unknown one (-32602, L-38, L-69; docs/ARCHITECTURE.md,
// A foreign id answers like an unknown one). Without an
// Authorization header, tasks/list is scoped to the session: after a restart
// the same session (same Mcp-Session-Id) still sees its tasks, but a new
// session does not (L-04, L-71). Task ids are 144-bit random values either
// way (L-70).
package legacyface
