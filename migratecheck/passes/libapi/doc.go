// Package libapi defines an Analyzer that finds uses of the legacy tasks APIs
// of Go MCP libraries (the table of migratecheck/internal/catalog): mark3labs/mcp-go, panyam/mcpkit's
// *V1 API, finemcp, theory-cloud/apptheory runtime/mcp and tmc/mcp.
//
// # Analyzer libapi
//
// libapi: find legacy MCP task APIs of Go MCP libraries by resolved object
//
// Identifiers are matched by the object they resolve to (types.Info.Uses),
// never by text, so selector uses, dot-imports, composite-literal keys,
// promoted fields, method values, type aliases (type Task = mcp.Task) and
// wrappers with a reexport fact are all found, and a same-named identifier
// of an unrelated package (the A2A SDK's ListTasks, a local ToolExecution
// type) is not. Library packages are recognised by the configured path
// prefixes (-migratecheck.libraries), so forks under other module paths
// work. The libraries' own packages are analysed like any code: only a
// package's references to its own declarations are skipped (as staticcheck's
// SA1019 does); the raw rules judge what the declaring package does. A read
// of a declaration field (if tool.Execution == nil) is worded as a read.
//
// The table lives in internal/catalog. Entries without a rule (for example
// mcp-go's WithTaskHooks) are not reported but recorded in Result.Engine as
// evidence of a 2025-11-25 task engine for MCP014. Uses in a switch case or
// if condition whose body only rejects the method with -32601 /
// METHOD_NOT_FOUND are exempt (docs/rules/README.md, What is not reported).
//
// Messages adapt to the library version found by the feature probe (for
// mcp-go: whether server.WithExtensions, client.WaitForTask and
// mcp.ResultTypeTask exist in the imported packages) and name the version the
// package's go.mod requires; when the probe cannot see a package, that
// version decides. The analyzer reports
// nothing; the root migratecheck analyzer reports its Result.
package libapi
