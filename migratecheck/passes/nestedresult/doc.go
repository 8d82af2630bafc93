// Package nestedresult defines an Analyzer for rule R3 of the rules
// catalogue: code that decodes or builds the 2025-11-25 nested
// CreateTaskResult {task: Task} (MCP008) without a catalogued library.
//
// # Analyzer nestedresult
//
// nestedresult: find nested CreateTaskResult {task: Task} shapes
//
// Reported:
//   - a struct field tagged json:"task" whose type is task-shaped (see
//     passes/tasktags);
//   - a struct field tagged json:"task" of type json.RawMessage (or another
//     named []byte RawMessage), any, or a map, in a struct that also has a
//     "content" key: the probe idiom that decodes a tools/call result once
//     and checks whether task is set;
//   - a map literal {"task": <task-shaped value>} that is returned from a
//     function or stored as a result ("result" map key, Result field or
//     variable).
//
// Each finding is also evidence of a legacy task engine for MCP014.
package nestedresult
