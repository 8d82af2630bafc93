package face

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
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
	if era, ok := plainEra(body, headerModern); ok {
		return era
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

// plainEra is DetectClientEra's fast path for a body (valid JSON, an
// object) whose members it reads exactly as encoding/json would: "method"
// a string, "params" an object, its "_meta" an object or absent, each given
// once and spelled in lower case (encoding/json also matches other cases
// and merges repeats; such bodies take the reflective path). It reports
// false when it cannot tell.
func plainEra(body []byte, headerModern func() (Era, bool)) (Era, bool) {
	if !json.Valid(body) {
		return EraLegacy, false
	}
	top, ok := plainMembers(body, "method", "params")
	if !ok {
		return EraLegacy, false
	}
	method, hasMethod := top["method"]
	if !hasMethod || rawjson.Kind(method) != "a string" {
		return EraLegacy, false
	}
	if params, ok := top["params"]; ok {
		if !rawjson.IsObject(params) {
			return EraLegacy, false
		}
		ps, ok := plainMembers(params, "_meta")
		if !ok {
			return EraLegacy, false
		}
		if meta, ok := ps["_meta"]; ok {
			if !rawjson.IsObject(meta) {
				return EraLegacy, false
			}
			o, err := rawjson.Decode(meta)
			if err != nil {
				return EraLegacy, false
			}
			if o.Has(modern.MetaKeyProtocolVersion) {
				return EraModern, true
			}
		}
	}
	var name string
	if json.Unmarshal(method, &name) != nil {
		return EraLegacy, false
	}
	switch name {
	case modern.MethodDiscover:
		return EraModern, true
	case "initialize":
		return EraLegacy, true
	}
	if era, ok := headerModern(); ok {
		return era, true
	}
	return EraLegacy, true
}

// plainMembers returns the members of obj named by keys, or false when one
// of them is given twice or any member's key matches one of them only
// without regard to case.
func plainMembers(obj []byte, keys ...string) (map[string]json.RawMessage, bool) {
	ms, err := rawjson.Members(obj)
	if err != nil {
		return nil, false
	}
	out := make(map[string]json.RawMessage, len(keys))
	for _, m := range ms {
		for _, k := range keys {
			if !strings.EqualFold(m.Key, k) {
				continue
			}
			if m.Key != k {
				return nil, false
			}
			if _, dup := out[k]; dup {
				return nil, false
			}
			out[k] = m.Val
		}
	}
	return out, true
}
