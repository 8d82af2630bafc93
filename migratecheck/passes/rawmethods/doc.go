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
//     AddNotificationHandler by default);
//  5. a const or var of this package initialised with such a literal and used
//     in one of the positions above: reported once, at the declaration, with
//     the uses as related information. Constants of other (non-library)
//     packages are reported at the use.
//
// Literals that merely contain a name (format strings, log lines), comments,
// and catalogued library constants (reported by passes/libapi) are never
// reported. A switch case or if condition whose body only rejects the method
// with -32601 / METHOD_NOT_FOUND / http.StatusNotFound is exempt, as is the
// inverted guard "if m != A && m != B { return }" followed only by such a
// rejection: rejecting the old methods is what the new spec requires.
//
// For MCP003 the analyzer proposes the opt-in literal rename to
// "notifications/tasks" unless the package already uses the new name (a
// dual-emit path). Result.Hits lists every position with its peer role, used
// by passes/tasktags (fix condition), passes/inputrequired and passes/mixed.
package rawmethods
