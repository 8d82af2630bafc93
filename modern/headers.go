package modern

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Streamable HTTP request headers of 2026-07-28 (M-10, M-32, M-43) as pure functions:
// which headers a request needs, how values are encoded, and the server-side
// validation that answers -32020 HeaderMismatch (M-10, M-32, M-43, M-67).

// Header is an HTTP header map with the same underlying type as net/http's
// http.Header, so either converts to the other: modern.Header(req.Header).
type Header map[string][]string

// CanonicalHeaderKey returns the canonical MIME form of a header name
// ("MCP-Protocol-Version" → "Mcp-Protocol-Version"), as net/http stores it.
func CanonicalHeaderKey(name string) string {
	b := []byte(name)
	upper := true
	for i, c := range b {
		switch {
		case upper && 'a' <= c && c <= 'z':
			b[i] = c - ('a' - 'A')
		case !upper && 'A' <= c && c <= 'Z':
			b[i] = c + ('a' - 'A')
		}
		upper = c == '-'
	}
	return string(b)
}

// Get returns the first value of the named header, matching the name
// case-insensitively; "" when absent.
func (h Header) Get(name string) string {
	if v := h[CanonicalHeaderKey(name)]; len(v) > 0 {
		return v[0]
	}
	for k, v := range h {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// Set replaces every case-variant of name with the single value, stored
// under the canonical key.
func (h Header) Set(name, value string) {
	for k := range h {
		if strings.EqualFold(k, name) {
			delete(h, k)
		}
	}
	h[CanonicalHeaderKey(name)] = []string{value}
}

const (
	sentinelPrefix = "=?base64?"
	sentinelSuffix = "?="
)

// NeedsEncoding reports whether v must be sent as =?base64?…?=: it has a byte
// outside visible ASCII and space (non-ASCII, control characters including
// tab and newline), leading or trailing whitespace, or it looks like the
// sentinel itself (streamable-http.mdx "Value Encoding").
func NeedsEncoding(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return true
		}
	}
	if v != "" && (v[0] == ' ' || v[len(v)-1] == ' ') {
		return true
	}
	return strings.HasPrefix(v, sentinelPrefix) && strings.HasSuffix(v, sentinelSuffix)
}

// EncodeHeaderValue returns v as an Mcp-Name / Mcp-Param-* header value: v
// itself when it is safe, else =?base64?<base64(utf-8)>?= (M-10).
func EncodeHeaderValue(v string) string {
	if !NeedsEncoding(v) {
		return v
	}
	return sentinelPrefix + base64.StdEncoding.EncodeToString([]byte(v)) + sentinelSuffix
}

// DecodeHeaderValue reverses EncodeHeaderValue. A sentinel value is
// base64-decoded (padded or unpadded standard alphabet); a plain value must
// consist of visible ASCII, space and tab. Anything else is -32020.
func DecodeHeaderValue(h string) (string, error) {
	v, err := decodeHeaderValue(HeaderName, h)
	if err != nil {
		return "", err
	}
	return v, nil
}

func decodeHeaderValue(name, h string) (string, *rpc.Error) {
	if strings.HasPrefix(h, sentinelPrefix) && strings.HasSuffix(h, sentinelSuffix) {
		if len(h) < len(sentinelPrefix)+len(sentinelSuffix) {
			return "", ErrHeaderInvalid(name, h, "truncated =?base64?…?= value")
		}
		body := h[len(sentinelPrefix) : len(h)-len(sentinelSuffix)]
		b, err := base64.StdEncoding.DecodeString(body)
		if err != nil {
			if b, err = base64.RawStdEncoding.DecodeString(body); err != nil {
				return "", ErrHeaderInvalid(name, h, "the =?base64?…?= payload is not valid base64")
			}
		}
		return string(b), nil
	}
	if err := checkPlain(name, h); err != nil {
		return "", err
	}
	return h, nil
}

// checkPlain rejects characters RFC 9110 does not allow in a field value.
func checkPlain(name, h string) *rpc.Error {
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return ErrHeaderInvalid(name, h, "it contains characters outside visible ASCII; such values must be sent as =?base64?…?=")
		}
	}
	return nil
}

// NameSource returns the params field that Mcp-Name mirrors for method:
// "name" for tools/call and prompts/get, "uri" for resources/read, "taskId"
// for tasks/get, tasks/update and tasks/cancel (M-32, M-67), "" otherwise.
func NameSource(method string) string {
	switch method {
	case MethodToolsCall, MethodPromptsGet:
		return "name"
	case MethodResourcesRead:
		return "uri"
	case MethodTasksGet, MethodTasksUpdate, MethodTasksCancel:
		return "taskId"
	}
	return ""
}

// headerExpectation is one header a request must (or may) carry.
type headerExpectation struct {
	name      string // spec spelling
	value     string // decoded value from the body
	inBody    bool   // the body has the value
	required  bool   // missing header is an error
	encodable bool   // may use =?base64?…?=
}

// expectations lists the standard headers of a decoded request.
func expectations(method string, params []byte, call bool) []headerExpectation {
	// Split by the raw-JSON scanner (DecodeRequest has checked the JSON):
	// every request a server reads passes here.
	var fields rawjson.Object
	if isObject(params) {
		fields, _ = rawjson.Decode(params)
	}
	version := headerExpectation{name: HeaderProtocolVersion, required: call}
	if meta, ok := fields.Get("_meta"); ok && isObject(meta) {
		if m, err := rawjson.Decode(meta); err == nil {
			if v, ok := m.Get(MetaKeyProtocolVersion); ok && isString(v) && json.Unmarshal(v, &version.value) == nil {
				version.inBody = true
			}
		}
	}
	out := []headerExpectation{
		version,
		{name: HeaderMethod, value: method, inBody: true, required: call},
	}
	if src := NameSource(method); src != "" {
		e := headerExpectation{name: HeaderName, required: call, encodable: true}
		if v, ok := fields.Get(src); ok && isString(v) && json.Unmarshal(v, &e.value) == nil {
			e.inBody = true
		}
		out = append(out, e)
	}
	return out
}

// RequestHeaders returns the standard headers a client sends with the raw
// request on Streamable HTTP: MCP-Protocol-Version (from _meta), Mcp-Method,
// and Mcp-Name (encoded when needed) for tools/call, prompts/get,
// resources/read and tasks/get|update|cancel (M-10, M-32). Keys are canonical.
// Mcp-Param-* headers need the tool's inputSchema and are not produced here.
// A header whose body value is missing (no _meta.protocolVersion, no string
// params.name) is left out; CheckHeaders then rejects the request with -32020,
// as a server must (every request carries its version, M-01).
func RequestHeaders(rawRequest []byte) (Header, error) {
	req, err := DecodeRequest(rawRequest)
	if err != nil {
		return nil, err
	}
	h := Header{}
	for _, e := range expectations(req.Method, req.Params, true) {
		if !e.inBody {
			continue
		}
		v := e.value
		if e.encodable {
			v = EncodeHeaderValue(v)
		}
		h.Set(e.name, v)
	}
	return h, nil
}

// CheckHeaders validates the standard headers of a raw 2026-07-28 request
// against its body, as a server that reads the body must (M-43, M-67). get
// returns a header value by name ("" when absent), e.g. http.Header.Get.
//
// Missing MCP-Protocol-Version, Mcp-Method or (where required) Mcp-Name,
// a value that differs from the body after base64 decoding, or an unreadable
// value give -32020. A body that is not a valid request gives its decoding
// error (-32700/-32600/-32602). Notifications need no headers, but headers
// they do carry must match. A body without _meta.protocolVersion is not
// compared (RequestMeta.Validate reports it as -32602).
func CheckHeaders(get func(name string) string, rawRequest []byte) *rpc.Error {
	req, err := DecodeRequest(rawRequest)
	if err != nil {
		return rpc.As(err)
	}
	for _, e := range expectations(req.Method, req.Params, req.IsCall()) {
		hv := get(e.name)
		if hv == "" {
			if e.required && (e.inBody || e.name != HeaderName) {
				return ErrHeaderMissing(e.name, e.value)
			}
			continue
		}
		got := hv
		if e.encodable {
			d, derr := decodeHeaderValue(e.name, hv)
			if derr != nil {
				return derr
			}
			got = d
		} else if perr := checkPlain(e.name, hv); perr != nil {
			return perr
		}
		if !e.inBody {
			if e.name == HeaderProtocolVersion {
				continue // the body's own -32602 is the better answer
			}
			return rpc.Errorf(rpc.CodeHeaderMismatch,
				"Header mismatch: %s header value %s has no counterpart in the body: params.%s is missing or not a string",
				e.name, quoteShort(got), NameSource(req.Method))
		}
		if got != e.value {
			return ErrHeaderMismatch(e.name, got, e.value)
		}
	}
	return nil
}

// ParamHeaderValue converts a tool argument for an Mcp-Param-{Name} header
// (M-11): strings as-is, integers in decimal, booleans as true/false, then
// EncodeHeaderValue. ok is false when the header must be omitted (absent,
// null) or the value is not a string, integer or boolean.
func ParamHeaderValue(arg json.RawMessage) (value string, ok bool) {
	if isNull(arg) {
		return "", false
	}
	a := trimRaw(arg)
	switch {
	case isString(a):
		var s string
		if json.Unmarshal(a, &s) != nil {
			return "", false
		}
		return EncodeHeaderValue(s), true
	case string(a) == "true" || string(a) == "false":
		return string(a), true
	}
	if n, ok := parseInt(a); ok {
		return strconv.FormatInt(n, 10), true
	}
	return "", false
}
