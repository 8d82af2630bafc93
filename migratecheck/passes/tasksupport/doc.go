// Package tasksupport defines an Analyzer for rule R6 of the rules
// catalogue: the removed tool execution.taskSupport (MCP009) declared
// without a catalogued library.
//
// # Analyzer tasksupport
//
// tasksupport: find the removed tool execution.taskSupport
//
// Reported:
//   - a struct field tagged json:"taskSupport…" when the owning struct is a
//     tool descriptor (its other JSON keys include name and inputSchema or
//     description), or is the type of a field tagged json:"execution" in
//     such a descriptor, or when the field's type is a string-kind named
//     type whose package declares constants of it with the values
//     "forbidden", "optional" and "required";
//   - a map key "taskSupport" in a map literal that is the value of the key
//     "execution".
//
// A struct that merely hashes or copies a taskSupport value (for example a
// canonical manifest for signing, without name + inputSchema/description) is
// not reported.
package tasksupport
