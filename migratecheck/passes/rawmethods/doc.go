// Package rawmethods defines an Analyzer for rule R1 of the rules catalogue:
// the legacy method names "tasks/result" (MCP001), "tasks/list" (MCP002) and
// "notifications/tasks/status" (MCP003) used as JSON-RPC method names in code
// that does not go through a catalogued library.
//
// # Analyzer rawmethods
//
// rawmethods: find removed MCP task method names in JSON-RPC method position
//
// A string constant (literal, named constant or constant expression) equal to
// exactly one of the three names counts only in method position:
//
//  1. the value of a struct field named Method (composite literal key or
//     assignment), or of a map key "method";
//  2. a case of a switch whose tag is named method (method, req.Method, …);
//  3. an operand of == or != whose other side is named method;
//  4. the first string argument of a call to a function or method listed in
//     -migratecheck.method-call-funcs (Call, CallRaw, SendRequest, Request,
//     Notify, SendNotification*, HandleMethod, Handle, RegisterMethod, On,
//     AddNotificationHandler by default; matched in any case, so call and
//     sendRequest count), or the argument at a method-sink parameter of a
//     function with a SinkFact (below);
//  5. a key of a handler table: a map literal or index assignment on a map
//     from string to functions;
//  6. a key of a map literal passed where a function looks the map up by a
//     received method name (replies[req.Method] in a fake server; a
//     map[string]bool allow-list or a counter of metrics labels does not
//     count);
//  7. a const or var of this package initialised with such a literal and used
//     in one of the positions above: reported once, at the declaration, with
//     the uses as related information. Constants of other packages
//     (including unexported dispatch constants of a library's own package)
//     are reported at the use, unless passes/libapi reports them.
//
// Method sinks: a function of any package (exported or not, any case) whose
// string parameter reaches positions 1, 4 or 5 (or whose string-keyed map
// parameter is looked up as in 6) is itself a sink; the analyzer computes
// this to a fixed point per package (helpers calling helpers, also within a
// test file) and exports a SinkFact, so rpcRequest(t, "tasks/result", …) is
// found in importers too.
//
// Literals that merely contain a name (format strings, log lines) and
// comments are never reported. A switch case or if condition whose body only
// rejects the method with -32601 / METHOD_NOT_FOUND / http.StatusNotFound is
// exempt, as is the inverted guard "if m != A && m != B { return }" followed
// only by such a rejection: rejecting the old methods is what the new spec
// requires. So is a client that accepts notifications/tasks/status and drops
// it (an empty case, a return of zero values, a log call, a metric counter
// call or ++, an empty handler literal),
// and a request for a removed method built in a _test.go function that
// asserts -32601 / METHOD_NOT_FOUND.
//
// For MCP003 the analyzer proposes the opt-in literal rename to
// "notifications/tasks" unless the package already uses the new name (a
// dual-emit path) or still serves or talks to 2025-11-25 peers
// (Result.ServesLegacy, the guard of every fix, which never depends on the
// library family). Result.Hits lists every position with its peer role, used
// by passes/tasktags (fix condition), passes/inputrequired and passes/mixed.
package rawmethods
