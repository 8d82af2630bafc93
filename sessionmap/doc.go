// Package sessionmap is the bridge's durable index of the sessions and tasks
// it hands out, scoped by principal and session.
//
// Modern MCP has no sessions and no tasks/list, while legacy clients need both,
// and both eras require that a task handle is durable before it reaches a client
// (L-12, M-53; docs/ARCHITECTURE.md, No handle before it is durable). Faces therefore write every session and
// task to a [Store] first, and read them back from it after a restart.
//
// # Scope rule
//
// Every session and task is owned by a [Scope] {Principal, Session}.
//
//   - Principal is a stable hash of the credential that authenticated the
//     request: [PrincipalFromAuthorization] (SHA-256 of the Authorization header
//     value) or [PrincipalFromMTLSSubject] (SHA-256 of the client certificate
//     subject), both domain-separated and hex-encoded, then keyed with the
//     store's principal key ([KeyPrincipal], principal_key.go) by the server
//     so that a weak credential cannot be guessed back from a stored or
//     logged principal. The raw secret is never stored, logged or printed;
//     only its keyed hash is.
//   - With a principal, a task belongs to that principal: any session of the same
//     principal can read, list and cancel it (the spec expects clients to resume
//     after reconnecting with a new session; L-68, L-69, L-53).
//   - With no credential (stdio, unauthenticated HTTP), Principal is "" and the
//     scope is the session alone: only that session sees the task. A session id
//     is not an authorization context, so in that case unguessable 128-bit task
//     ids (see [NewTaskID], L-70) are the protection, as the spec requires.
//
// A task outside the caller's scope is reported exactly like an unknown one:
// the same [ErrNotFound] value, so existence never leaks (L-38, M-60;
// docs/ARCHITECTURE.md, A foreign id answers like an unknown one).
// Foreign list cursors are rejected with [ErrInvalidCursor] (L-51).
//
// # Status rules
//
// Status is monotonic (docs/ARCHITECTURE.md, Status is monotonic and a
// pinned cancel sticks): a terminal status
// (completed, failed, cancelled) never changes, and a cancel pinned by
// [Store.PinCancel] wins over any later upstream state (L-58, L-59).
//
// # Expiry
//
// A task with a TTL expires at CreatedAt+TTL whatever its status (L-64); it is
// then invisible to reads and lists (L-65) and is removed by the store's
// garbage collector. A nil TTL means unlimited.
//
// The Badger implementation ([OpenBadger]) is the default backend; [OpenRedis]
// keeps the index in Redis, shared by several bridge processes; [NewMemory]
// is an in-memory one for unit tests of other packages; package storetest holds
// the conformance suite any backend must pass.
package sessionmap
