// Package legacy holds the wire types of the MCP 2025-11-25 experimental tasks
// (the "legacy" era): capabilities, the task opt-in, Task and its results,
// tasks/get|result|list|cancel, status notifications and the related-task _meta
// key. Decoding is lenient (unknown fields are kept where a proxy forwards
// them); encoding is strict (what the schema requires, nothing it forbids).
// The package does no I/O.
//
// Conventions used throughout:
//
//   - Every DecodeX function returns either a value or an *rpc.Error whose code
//     is what a face should answer: -32700 when the bytes are not JSON, -32600
//     when a JSON-RPC envelope is malformed, -32602 when a field is missing or
//     has the wrong type. Messages name the offending field. Decoders never
//     panic.
//   - Every message type has a Validate method and a MarshalJSON that calls it,
//     so an invalid outgoing message fails to encode (with a -32603 *rpc.Error)
//     instead of reaching a peer. A Task always encodes "ttl", as null when
//     TTL is nil (L-21).
//   - Functions on json.RawMessage (SplitTaskParam, SetRelatedTask,
//     PatchServerTasks, PatchListToolsTaskSupport, ...) keep every member they
//     do not touch verbatim: keys and values are copied byte for byte; only the
//     whitespace between members may change.
//
// Where to find what:
//
//   - status.go: TaskStatus, CanTransition (L-25, L-26).
//   - task.go, timefmt.go: Task, NewTask, FormatTime/ParseTime.
//   - messages.go: CreateTaskResult, tasks/get|result|list|cancel params and
//     results, TaskStatusNotificationParams, NewGetTaskPayloadResult (L-34).
//   - envelope.go: Request/Notification/Response and the typed tasks/*
//     request envelopes, TaskStatusNotification.
//   - taskparam.go: TaskMetadata, SplitTaskParam/SetTaskParam (L-24).
//   - meta.go: Meta, SetRelatedTask/RelatedTaskOf (L-32..L-37).
//   - capabilities.go: ServerTasksCapability, ClientTasksCapability and the
//     raw patch helpers for capabilities and initialize messages (L-01..L-04, L-11).
//   - tools.go: TaskSupport, tools/list patching, DecideToolCall (L-05..L-10).
//   - errors.go: the era's JSON-RPC errors (L-38, L-45, L-55, L-56, L-65, L-66).
//
// Checklist ids (L-xx) are the rows of docs/CONFORMANCE.md, each with the
// test that proves it.
package legacy
