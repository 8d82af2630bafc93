// Package interop proves the legacy face with real third-party legacy
// (2025-11-25 experimental tasks) clients, in `make test`: the official
// TypeScript SDK 1.32.2 (`client.experimental.tasks`) and mark3labs/mcp-go
// v1.2.1, both run from interop/ by interop/peers against the bridge in front
// of the embedded modern upstream (internal/demo) — in process, and as a real
// `bridge demo` process. The package holds only tests;
// this file exists so it has a name and a doc comment.
package interop
