package modernface

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/tasksbridge/tasksbridge/modern"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// Era is a peer's protocol era (upstream/modern's type, so a dispatcher
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
	return ClientEraOf(h, bodySignals(body))
}

// EraSignals is what DetectClientEra reads of a request body, so that a
// dispatcher that has already decoded the body (once, for everything it
// needs) can apply the same rule with ClientEraOf instead of having the body
// decoded again.
type EraSignals struct {
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

// BodyShape classifies a request body for era detection.
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

// bodySignals decodes the members DetectClientEra reads.
func bodySignals(body []byte) EraSignals {
	body = bytes.TrimSpace(body)
	switch {
	case len(body) == 0:
		return EraSignals{Body: BodyEmpty}
	case body[0] != '{':
		return EraSignals{Body: BodyOther}
	}
	var msg struct {
		Method *string `json:"method"`
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		return EraSignals{Body: BodyMalformed}
	}
	sig := EraSignals{Body: BodyObject, HasMethod: msg.Method != nil}
	if msg.Method != nil {
		sig.Method = *msg.Method
	}
	_, sig.MetaProtocolVersion = msg.Params.Meta[modern.MetaKeyProtocolVersion]
	return sig
}

// ClientEraOf is DetectClientEra's rule on a body already decoded.
func ClientEraOf(h http.Header, sig EraSignals) Era {
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
	switch sig.Body {
	case BodyEmpty, BodyOther:
		if era, ok := headerModern(); ok && sig.Body == BodyEmpty && h.Get("Mcp-Session-Id") == "" {
			return era
		}
		return EraLegacy
	case BodyMalformed:
		// Not even the fields we look at parse: let the era of the version
		// header (if any) answer with its own error.
		if era, ok := headerModern(); ok {
			return era
		}
		return EraLegacy
	}
	if !sig.HasMethod {
		return EraLegacy // a response: only legacy clients send those
	}
	if sig.MetaProtocolVersion {
		return EraModern
	}
	switch sig.Method {
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
