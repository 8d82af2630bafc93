// Package modern holds the wire types of MCP 2026-07-28 and the
// io.modelcontextprotocol/tasks extension (the "modern" era): per-request
// _meta, server/discover, resultType, flat CreateTaskResult, DetailedTask,
// tasks/get|update|cancel, input requests and responses, notifications/tasks,
// subscriptions/listen, the era's error codes and the Mcp-* header rules.
// Decoding is lenient, encoding strict. The package does no I/O.
//
// # Conventions
//
//   - Every DecodeX(data []byte) (X, error) is lenient: unknown fields are
//     ignored or, where a proxy must forward them, kept (Extra, Other, Meta).
//     Its errors are always *rpc.Error: -32700 when data is not JSON, -32600
//     for a broken JSON-RPC envelope, -32602 naming the offending field
//     otherwise. Decoders never panic (fuzzed).
//   - Every type's MarshalJSON is strict: it refuses (with a -32603 *rpc.Error,
//     reachable through errors.As) to emit what the official schemas reject,
//     e.g. a completed DetailedTask without result, a Task without createdAt.
//     Task.TTLMs is always written, null meaning unlimited.
//   - Objects are written with a fixed field order and no HTML escaping, so
//     opaque strings such as requestState are echoed byte-for-byte (M-18).
//   - Capabilities are per request (M-39, M-50): RequestMeta.TasksDeclared
//     tells whether *this* request declared the tasks extension.
//   - The error constructors (ErrTasksExtensionRequired, ErrHeaderMismatch,
//     ErrUnsupportedProtocolVersion, ErrTaskNotFound, ErrMethodNotFound, ...)
//     use only codes 2026-07-28 defines; -32003, the draft number of
//     MissingRequiredClientCapability, is never emitted.
//   - Header helpers (RequestHeaders, CheckHeaders, EncodeHeaderValue) work on
//     strings and on Header, a map with http.Header's underlying type.
//
// Request params types (GetTaskParams, UpdateTaskParams, ListenParams, ...)
// model the params object only; EncodeRequest, EncodeNotification,
// EncodeResult and EncodeError build the JSON-RPC envelopes, and
// DecodeRequest/DecodeResponse read them into go-sdk's jsonrpc types.
package modern
