package era

import (
	"bytes"
	"encoding/json"

	"github.com/tasksbridge/tasksbridge/modern"
)

// BodyShape classifies a request body for the client-era rule.
type BodyShape int

const (
	// BodyEmpty: no body, or only whitespace (GET, DELETE).
	BodyEmpty BodyShape = iota
	// BodyOther: something other than an object (a batch, a scalar, bytes
	// that are not JSON).
	BodyOther
	// BodyMalformed: starts like an object, but is not JSON, or its method
	// is not a string, or its params or params._meta not an object (null
	// counts as absent).
	BodyMalformed
	// BodyObject: an object whose method, params and params._meta have
	// those types.
	BodyObject
)

// Signals is what the client-era rule reads of a request body. A router
// that decodes the body once for everything it needs fills it from that
// decode; BodySignals fills it from the bytes.
type Signals struct {
	// Body is the shape of the body.
	Body BodyShape
	// Method is the method of a BodyObject; HasMethod whether it names one
	// (a response has none).
	Method    string
	HasMethod bool
	// MetaProtocolVersion: params._meta has the
	// "io.modelcontextprotocol/protocolVersion" member (any value).
	MetaProtocolVersion bool
}

// BodySignals decodes the members of body the client-era rule reads.
func BodySignals(body []byte) Signals {
	body = bytes.TrimSpace(body)
	switch {
	case len(body) == 0:
		return Signals{Body: BodyEmpty}
	case body[0] != '{':
		return Signals{Body: BodyOther}
	}
	var msg struct {
		Method *string `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		return Signals{Body: BodyMalformed}
	}
	sig := Signals{Body: BodyObject, HasMethod: msg.Method != nil}
	if msg.Method != nil {
		sig.Method = *msg.Method
	}
	_, sig.MetaProtocolVersion = msg.Params.Meta[modern.MetaKeyProtocolVersion]
	return sig
}

// Request is what the client-era rule reads of one request to a dual-era
// endpoint: two headers and the body's signals.
type Request struct {
	// Version is the MCP-Protocol-Version header ("" when absent).
	Version string
	// SessionID is the Mcp-Session-Id header ("" when absent).
	SessionID string
	// Body is what the body says (BodySignals).
	Body Signals
	// KnownLegacySession reports whether SessionID names a legacy session
	// the bridge holds. The rule calls it only for a request that would
	// otherwise be modern and carries a session id, so the lookup behind it
	// is paid only then; nil means none is known.
	KnownLegacySession func() bool
}

// Client decides which era one client request speaks, and so which face
// serves it: a dual-era server picks semantics from how the client opens
// (M-06, M-36). Reading only two headers and the body, it lets a router
// decide before any face sees the request:
//
//   - a request carrying the Mcp-Session-Id of a legacy session the bridge
//     holds is legacy, whatever its body says (a legacy client that adds a
//     modern member keeps its session);
//   - a body whose _meta carries "io.modelcontextprotocol/protocolVersion"
//     is modern, whatever the value: the modern face negotiates it (-32022
//     with the supported versions when it cannot serve it, M-38);
//   - server/discover is modern (it exists only from 2026-07-28, M-36);
//   - initialize is legacy (L-01: the legacy handshake);
//   - otherwise an MCP-Protocol-Version header of 2026-07-28 or later is
//     modern (a modern request whose _meta is missing then gets the modern
//     face's -32602, M-37), an older one legacy;
//   - everything else is legacy: a JSON-RPC response (modern clients never
//     POST responses), a batch, an unparsable body without a version
//     header, a bodiless GET/DELETE without a modern version header or with
//     a session id.
func Client(r Request) Era {
	e := clientByMessage(r)
	if e == Modern && r.SessionID != "" && r.KnownLegacySession != nil && r.KnownLegacySession() {
		return Legacy
	}
	return e
}

func clientByMessage(r Request) Era {
	byHeader := func() (Era, bool) {
		switch {
		case r.Version == "":
			return Legacy, false
		case r.Version >= modern.ProtocolVersion: // revisions are dates: they sort as such
			return Modern, true
		}
		return Legacy, true
	}
	switch r.Body.Body {
	case BodyEmpty:
		if e, ok := byHeader(); ok && r.SessionID == "" {
			return e
		}
		return Legacy
	case BodyOther:
		return Legacy
	case BodyMalformed:
		// Not even the members the rule reads parse: the era of the
		// version header (if any) answers with its own error.
		if e, ok := byHeader(); ok {
			return e
		}
		return Legacy
	}
	if !r.Body.HasMethod {
		return Legacy // a response: only legacy clients send those
	}
	if r.Body.MetaProtocolVersion {
		return Modern
	}
	switch r.Body.Method {
	case modern.MethodDiscover:
		return Modern
	case "initialize":
		return Legacy
	}
	if e, ok := byHeader(); ok {
		return e
	}
	return Legacy
}
