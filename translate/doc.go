// Package translate holds the pure mappings between the legacy (2025-11-25)
// and modern (2026-07-28 + tasks extension) task dialects: task shapes,
// statuses, cancel semantics, capabilities, tools/list patching, input
// requests and error codes. It does no I/O; time comes from an injected clock.
package translate
