// Package metakeys defines an Analyzer for rule R7 of the rules catalogue:
// the legacy _meta keys io.modelcontextprotocol/related-task and
// io.modelcontextprotocol/model-immediate-response (MCP011) used without a
// catalogued library.
//
// # Analyzer metakeys
//
// metakeys: find legacy MCP task _meta keys used as map keys
//
// A string constant (literal, or a constant of a non-library package) equal
// to one of the two keys is reported where it is used as a map key: a map
// literal key or the index of a map index expression (read or write). Other
// mentions (log lines, documentation strings) are not reported. Catalogued
// library constants such as mcp-go's mcp.RelatedTaskMetaKey are reported by
// passes/libapi instead.
package metakeys
