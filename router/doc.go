// Package router is the bridge's composition root: one http.Handler for
// /mcp that serves clients of either era in front of an upstream of either
// era, plus /healthz, /readyz and /metrics, with every request metered.
//
// # Routing
//
// Per client request: era.Client decides (the rule and its spec ids are in
// the era package) — a body whose _meta carries
// io.modelcontextprotocol/protocolVersion, server/discover, or an
// MCP-Protocol-Version header of 2026-07-28 or later is modern; initialize,
// a JSON-RPC response, a batch or anything without a modern sign is legacy —
// and a request carrying the Mcp-Session-Id of a legacy session this bridge
// knows (it saw its initialize, or the store holds it) is legacy whatever its
// body says.
//
// Per upstream: an era.Selector caches the era. In auto mode the first
// request (or /readyz) probes with upstream/modern.ProbeEra, whose outcome
// era.Upstream classifies: server/discover, read for the era of the
// upstream's tasks (a server that names 2026-07-28 but advertises the
// 2025-11-25 capabilities.tasks and not the tasks extension is legacy),
// legacy on any non-modern outcome without keying on one error code; an
// unreachable upstream is not cached (503 + -32603 until it answers). The
// cache is dropped — the next request probes again — when the upstream stops
// behaving like its era: a transport failure, a modern request refused with
// 400/404/405 without a JSON-RPC body, a legacy initialize refused with
// -32020/-32021/-32022. Config.UpstreamEra pins it. The last probed era is
// remembered in the store (sessionmap.Store's UpstreamEra, eramemo.go) and
// answers while the upstream cannot be probed.
//
// The four paths:
//
//	client  upstream  path
//	legacy  modern    face/legacy (emulated legacy tasks over the extension)
//	modern  legacy    face/modern (the extension over legacy tasks)
//	legacy  legacy    passthrough
//	modern  modern    passthrough
//
// Passthrough is an httputil.ReverseProxy to the upstream URL with minimal
// touching: the body is forwarded byte for byte, SSE is streamed unbuffered
// (FlushInterval -1), hop-by-hop headers are dropped, everything else —
// Mcp-Session-Id, Authorization, MCP-Protocol-Version, Mcp-Method/Mcp-Name —
// passes both ways. The router only adds what a bridge endpoint must:
// Host/Origin checks (DNS rebinding), the body limit (413), and -32022 naming
// SupportedVersions for a modern request of a version it does not serve. A
// stdio upstream (UpstreamCommand) has no URL to proxy to: same-era requests
// then get HTTP 501 with a JSON-RPC error saying so.
//
// # Malformed requests
//
// Every POST body is read once (readClientMsg, message.go: one validity check
// and one walk over its members into a small view that era detection,
// checkBody and the wire meter share) and judged once, before any path sees
// it, by checkBody (validate.go, pure and table-tested): a body that is not
// one UTF-8 JSON value (trailing data included) is -32700, a value that is
// not a JSON-RPC message (null, a batch, a duplicate member name, a bad id,
// more than 64 members or 1,024 in params or _meta) -32600, so is a body
// nested deeper than 128 levels (JSON or not: it is never read further), in
// work linear in its size (docs/RELIABILITY.md "Hostile input"), params a
// face would misread (a non-string tool name, a
// fractional ttl) -32602, a method the face taking the request does not serve
// -32601 (HTTP 404 for modern clients, M-42), and an unknown notification is
// accepted with 202 and dropped. Passthrough requests are judged as messages
// only: the upstream knows its own methods.
//
// # Metering
//
// Client traffic is metered on the wire (wireMeter): every request body is
// read once by the router and every answer is parsed as it streams out (JSON,
// or each SSE event), so all four paths count alike and exactly what clients
// saw. On passthrough the answer the client is sent is the upstream's, byte
// for byte, so that one parse settles the upstream request too
// (exchange.attach). Upstream traffic is metered where it leaves the process
// (an http.RoundTripper under every upstream client, an mcp.Connection
// wrapper for stdio). The store is wrapped in a metering sessionmap.Store
// (meteredStore), which also follows task statuses. The legacy face's session
// hook moves tasksbridge_sessions_active. No label ever carries an id: ids
// are in-memory correlation keys only.
package router
