// Package capabilities defines an Analyzer for rule R4 of the rules
// catalogue: the 2025-11-25 capabilities.tasks declaration (MCP004, and
// MCP013 for its client-hosted sampling/elicitation requests) written
// without a catalogued library. It also records where the package
// advertises the io.modelcontextprotocol/tasks extension, for MCP014.
//
// # Analyzer capabilities
//
// capabilities: find capabilities.tasks declarations and extension advertisements
//
// Reported:
//   - a map literal entry or index assignment with key "tasks" whose value
//     is a map literal with a list, cancel or requests key; inside it,
//     requests.sampling and requests.elicitation are MCP013;
//   - a struct field tagged json:"tasks" (not a slice, array or map) in a
//     struct whose other JSON keys look like capabilities (tools, resources,
//     prompts, logging, completions, experimental). A task list such as
//     ListTasksResult{Tasks []Task `json:"tasks"`} is not.
//
// Advertisements (Result.Adverts) are string constants equal to
// "io.modelcontextprotocol/tasks" used as a map literal key, as the key of an
// index assignment, or as the first argument of AddExtension / WithExtension
// / RegisterExtension / SetExtension calls. Reading the key (checking what a
// peer declared) is not an advertisement.
//
// Messages name the extension API of the library in use when the feature
// probe finds one (go-sdk ServerCapabilities.AddExtension since v1.4.0,
// mcp-go server.WithExtensions since v1.0.0-beta.1).
package capabilities
