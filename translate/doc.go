// Package translate holds the pure mappings between the legacy (2025-11-25)
// and modern (2026-07-28 + io.modelcontextprotocol/tasks) task dialects: task
// shapes and renames, status semantics, the pinned-cancel decision,
// capabilities, tools/list patching, input requests and their answers, the
// tasks/result emulation decision and error-code mapping, in both directions.
//
// Every function is pure: no I/O, no goroutines, no global state. Time comes
// from an injected Clock and fresh identifiers (side-channel request ids,
// URL-elicitation ids, input keys) from an injected IDSource, so every outcome
// is reproducible in the transcript tests (testdata/*.txtar).
//
// Inputs that arrive from a peer are taken as raw JSON and decoded with the
// legacy and modern packages; outputs are the typed values of those packages
// (whose MarshalJSON is strict) or raw JSON where no typed value exists.
// Malformed input never panics: it yields an *rpc.Error carrying the code a
// face should answer with (-32700 not JSON, -32600 bad envelope, -32602 bad
// params). A result that an upstream got wrong yields -32603 (L-66): the
// client did nothing wrong.
//
// Who calls what:
//   - the legacy face (legacy client, modern upstream) uses the *ToLegacy /
//     *ToModern functions for requests it forwards, and DecideLegacyCancel,
//     MergeLegacyTask and TasksResultOutcome for what it emulates;
//   - the modern face (modern client, legacy upstream) uses the reverse ones:
//     DiscoverResultFromInitialize, ToolsCallToLegacy, DetailedTaskFromLegacy,
//     InputRequestFromLegacy, InputEntry.Response, ResultToModern,
//     ModernCancelReply;
//   - both ask CheckInputCapability before showing a client an input request.
//
// Members a proxy forwards but does not own (unknown result members,
// structuredContent, vendor _meta keys, unknown params) come out byte for byte
// as they came in, modulo insignificant whitespace: member order, key
// spelling, number spelling and string escapes are kept (forward_test.go).
//
// Each exported function's doc comment names the checklist rows it implements
// (L-xx: the 2025-11-25 receiver checklist, M-xx: the 2026-07-28 and tasks
// extension checklist); docs/CONFORMANCE.md
// maps every row to its function and test.
package translate
