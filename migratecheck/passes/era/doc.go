// Package era defines an Analyzer that finds code which already serves both
// protocol eras, so that legacy findings there are notes rather than errors
// and no SuggestedFix touches it.
//
// # Analyzer era
//
// era: find code that serves both MCP task eras
//
// A function serves both eras when it branches on the negotiated protocol
// version: an if condition, switch tag or case, or comparison mentions a
// date-shaped protocol version constant ("2025-11-25", "2026-07-28", or a
// named constant with such a value), or a predicate whose name says the era
// (IsModernProtocol, isLegacySession, …). A bare protocolVersion field does
// not count: only a comparison with a version says which era a branch
// serves.
//
// A package implements the extension when it uses the extension-only method
// "tasks/update", builds a result with resultType "task", or answers -32021
// (Missing Required Client Capability): together with an advertisement of
// io.modelcontextprotocol/tasks that is a dual stack, which SEP-2663's
// compatibility table allows.
package era
