// Package legacy holds the wire types of the MCP 2025-11-25 experimental tasks
// (the "legacy" era): capabilities, the task opt-in, Task and its results,
// tasks/get|result|list|cancel, status notifications and the related-task _meta
// key. Decoding is lenient (unknown fields are kept where a proxy forwards
// them); encoding is strict (what the schema requires, nothing it forbids).
// The package does no I/O.
package legacy
