// Package era owns the bridge's notion of a protocol era: the Era type, the
// rule that decides which era one client request speaks, the classification
// of an upstream from its server/discover probe, and the --upstream-era
// modes with the selector that caches the upstream's era. It is pure: no
// network, files or SDK sessions. The router, the faces and the upstream
// clients do the I/O and call it.
//
// # Eras
//
// Legacy is the 2025-11-25 protocol: a session opened with initialize, the
// experimental tasks (a task param on tools/call, blocking tasks/result,
// tasks/list; L-01 … L-86). Modern is 2026-07-28 and later: no session, every
// request carries _meta["io.modelcontextprotocol/protocolVersion"] and the
// client's capabilities (M-01), tasks are the io.modelcontextprotocol/tasks
// extension. An era is also its record text ("legacy", "modern"): sessionmap
// stores it on sessions and for the upstream's remembered era, metrics use
// it as a label.
//
// # The client's era (Client)
//
// One request decides, from the MCP-Protocol-Version and Mcp-Session-Id
// headers and the body; first match wins:
//
//  1. the session id of a legacy session the bridge holds: legacy;
//  2. _meta carries the protocolVersion member: modern, whatever its value
//     (the modern face answers an unsupported one with -32022, M-38);
//  3. server/discover: modern (M-36); initialize: legacy (L-01);
//  4. an MCP-Protocol-Version header of 2026-07-28 or later: modern (a
//     modern request without its _meta then gets -32602 from the modern
//     face, M-37); an older header: legacy;
//  5. anything else — a JSON-RPC response, a batch, an unparsable body
//     without a version header, a bodiless GET or DELETE without a modern
//     header or with a session id: legacy.
//
// # The upstream's era (Upstream, Tasks, Selector)
//
// The bridge probes an upstream with server/discover, on stdio too (M-06).
// A DiscoverResult is read for the era of its tasks: modern when it names a
// modern revision and does not keep the 2025-11-25 tasks capability in
// place of the extension (M-66). A recognised modern error (-32020, -32021,
// or -32022 naming a modern revision) is modern too (M-07: inspect the body
// of a 400/404, do not fall back). Any other answer, and silence on stdio,
// is legacy. An unreachable upstream, or one that refuses the probe's
// credentials with 401/403, decides nothing (Unknown).
//
// Selector caches the decided era per process and shares one probe between
// concurrent callers; callers Invalidate it when the upstream stops
// behaving like that era, and the next request probes again (M-08). The
// router also remembers the era in the store (sessionmap's UpstreamEra,
// M-08: MAY persist it), so a bridge restarted while its upstream is down
// still routes each client to the right face.
package era
