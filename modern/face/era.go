package face

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/tasksbridge/tasksbridge/modern"
	modernup "github.com/tasksbridge/tasksbridge/modern/upstream"
)

// Era is a peer's protocol era (modern/upstream's type, so a dispatcher
// compares client and upstream eras with one vocabulary).
type Era = modernup.Era

// The eras DetectClientEra returns.
const (
	EraLegacy = modernup.EraLegacy
	EraModern = modernup.EraModern
)

// DetectClientEra decides, for one HTTP request to a dual-era endpoint, which
// face serves it (modern-tasks.md §3.4: a dual-era server picks semantics from
// how the client opens; versioning.mdx). It reads only the headers and the
// body, so a dispatcher can route each request before any face sees it:
//
//   - a body whose _meta carries "io.modelcontextprotocol/protocolVersion" is
//     modern, whatever the value: the modern face negotiates it (-32022 with
//     the supported versions when it cannot serve it, M-38);
//   - server/discover is modern (it exists only from 2026-07-28);
//   - initialize is legacy;
//   - otherwise an MCP-Protocol-Version header of 2026-07-28 or later is
//     modern (a modern request whose _meta is missing then gets the modern
//     face's -32602, M-37), an older one legacy;
//   - everything else is legacy: an Mcp-Session-Id, a JSON-RPC response
//     (modern clients never POST responses), a batch, an unparsable body, a
//     bodiless GET/DELETE without a modern version header.
func DetectClientEra(h http.Header, body []byte) Era {
	headerModern := func() (Era, bool) {
		v := h.Get(modern.HeaderProtocolVersion)
		if v == "" {
			return EraLegacy, false
		}
		if v >= modern.ProtocolVersion {
			return EraModern, true
		}
		return EraLegacy, true
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		if era, ok := headerModern(); ok && len(body) == 0 && h.Get("Mcp-Session-Id") == "" {
			return era
		}
		return EraLegacy
	}
	var msg struct {
		Method *string `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		// Not even the fields we look at parse: let the era of the version
		// header (if any) answer with its own error.
		if era, ok := headerModern(); ok {
			return era
		}
		return EraLegacy
	}
	if msg.Method == nil {
		return EraLegacy // a response: only legacy clients send those
	}
	if _, ok := msg.Params.Meta[modern.MetaKeyProtocolVersion]; ok {
		return EraModern
	}
	switch *msg.Method {
	case modern.MethodDiscover:
		return EraModern
	case "initialize":
		return EraLegacy
	}
	if era, ok := headerModern(); ok {
		return era
	}
	return EraLegacy
}
