package router

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tasksbridge/tasksbridge/era"
	modernface "github.com/tasksbridge/tasksbridge/face/modern"
	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// The router checks every POST body once, before any face or the upstream
// sees it, and answers malformed messages itself with a JSON-RPC error a
// person can act on (JSON-RPC 2.0 §5.1 codes; M-42 for unknown methods;
// notifications are never answered, M-43): -32700 for a body that is not
// one UTF-8 JSON value, -32600 for a value that is not a JSON-RPC message,
// -32602 for params a face would misread, -32601 for a method the face that
// takes the request does not serve. Everything that passes goes on
// unchanged. checkBody is the whole decision, pure and table-tested.

// bodyRoute is who answers a request that passes the checks.
type bodyRoute int

const (
	// routeUpstream: passthrough; the upstream judges methods and params.
	routeUpstream bodyRoute = iota
	// routeLegacyFace: the legacy face (legacy client, modern upstream).
	routeLegacyFace
	// routeModernFace: the modern face (modern client, legacy upstream).
	routeModernFace
)

// legacyFaceMethods are the requests the legacy face answers; the others get
// -32601 from the router (go-sdk would answer them with a plain-text 400).
var legacyFaceMethods = map[string]bool{
	legacy.MethodInitialize: true, legacy.MethodPing: true, "logging/setLevel": true,
	legacy.MethodToolsList: true, legacy.MethodToolsCall: true,
	legacy.MethodTasksGet: true, legacy.MethodTasksResult: true, legacy.MethodTasksList: true, legacy.MethodTasksCancel: true,
	"prompts/list": true, "prompts/get": true, "completion/complete": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true,
}

// legacyFaceNotifications are the notifications the legacy face acts on; the
// router accepts (202) and drops the others.
var legacyFaceNotifications = map[string]bool{
	legacy.MethodInitialized: true, legacy.MethodCancelled: true, legacy.MethodProgress: true,
	"notifications/roots/list_changed": true,
}

// verdict is checkBody's decision. With neither err nor accept set the body
// goes on to its route unchanged.
type verdict struct {
	err *rpc.Error
	// id is the request's id for the error response (null when unknown).
	id json.RawMessage
	// accept: a notification nobody handles, acknowledged with 202 and
	// dropped (M-43; JSON-RPC: notifications are never answered).
	accept bool
}

// checkBody judges one POST body (read once: readClientMsg) for route.
func checkBody(cm *clientMsg, route bodyRoute, clientEra era.Era) verdict {
	if cm.badUTF8 >= 0 {
		return parseError("the body is not valid UTF-8 (first bad byte at offset %d); send the request encoded as UTF-8", cm.badUTF8)
	}
	t := cm.body
	if len(t) == 0 {
		return parseError("the body is empty; send one JSON-RPC message")
	}
	dup := cm.dup // offsets in messages count from the body's first byte
	if deep, ok := cm.syntax.(*nestingError); ok {
		// Not a parse error: the body may well be JSON, only too deep to
		// read.
		return invalidRequest(nullID, "%v", deep)
	}
	if cm.syntax != nil {
		return verdict{err: rpc.Errorf(rpc.CodeParseError, "Parse error: %v", cm.syntax), id: nullID}
	}
	switch t[0] {
	case '{':
	case '[':
		if len(bytes.TrimLeft(t[1:], " \t\r\n")) == 1 { // "[", blanks, "]"
			return invalidRequest(nullID, "the body is an empty batch; send one JSON-RPC request object")
		}
		// JSON-RPC batches were removed from MCP in 2025-06-18; neither
		// era the bridge speaks (2025-11-25, 2026-07-28) has them, so every
		// path takes one message per POST (a same-era upstream would refuse
		// a batch too, in its own words: go-sdk with a plain-text 400).
		return invalidRequest(nullID, "batches are not supported by %s or %s (MCP removed JSON-RPC batching in 2025-06-18); "+
			"send each JSON-RPC message in its own POST", legacy.ProtocolVersion, modern.ProtocolVersion)
	case 'n':
		return invalidRequest(nullID, "the body is JSON null; send a JSON-RPC request object")
	default:
		return invalidRequest(nullID, "the body is %s; send a JSON-RPC request object", kindOf(t))
	}
	m := &cm.raw
	id := nullID
	if m.id != nil {
		if !validID(m.id) {
			return invalidRequest(nullID, `"id" must be a string or an integer, not %s`, kindOf(m.id))
		}
		id = m.id
	}
	if dup != "" && !strings.HasPrefix(dup, "params.") {
		return invalidRequest(id, "member %q appears twice; each name may appear once per object", dup)
	}
	if n := cm.wire.members; n > maxMessageMembers {
		return invalidRequest(id, "the message has %d members; a JSON-RPC message has at most %d (jsonrpc, id, method, params, …)", n, maxMessageMembers)
	}
	if p := &cm.wire.Params; p.members > maxParamsMembers || p.metaMembers > maxParamsMembers {
		return invalidRequest(id, "params or params._meta has more than %d members (%d, %d); send the data a tool takes in params.arguments", maxParamsMembers, p.members, p.metaMembers)
	}
	if string(m.jsonrpc) != `"2.0"` {
		return invalidRequest(id, `"jsonrpc" must be "2.0"`)
	}
	hasID := m.id != nil
	if m.method == nil {
		if !hasID || (m.result != nil) == (m.error != nil) {
			return invalidRequest(id, `a message needs a "method" (a request or notification), or an "id" with exactly one of "result" or "error" (a response)`)
		}
		return verdict{} // a legacy client's answer to a server→client request
	}
	if !isString(m.method) {
		return invalidRequest(id, `"method" must be a non-empty string`)
	}
	method := cm.wire.Method
	if m.params != nil && !isObject(m.params) {
		if !hasID {
			return verdict{accept: true} // a notification is never answered
		}
		return invalidParams(id, `"params" must be a JSON object, not %s`, kindOf(m.params))
	}
	if dup != "" {
		if !hasID {
			return verdict{accept: true}
		}
		return invalidParams(id, "member %q appears twice; each name may appear once per object", dup)
	}
	if route == routeUpstream {
		return verdict{} // the upstream knows its own methods and params
	}
	if !served(route, method, hasID) {
		if !hasID {
			return verdict{accept: true}
		}
		return verdict{err: methodNotFound(route, method), id: id}
	}
	if !hasID {
		return verdict{}
	}
	if msg := checkParams(method, &cm.wire.Params, clientEra); msg != "" {
		return invalidParams(id, "%s", msg)
	}
	return verdict{}
}

var nullID = json.RawMessage("null")

// methodNotFound is the -32601 for a method route does not serve (M-42),
// saying what to do where there is something to say.
func methodNotFound(route bodyRoute, method string) *rpc.Error {
	if route == routeLegacyFace {
		switch method {
		case modern.MethodDiscover, modern.MethodSubscriptionsListen, modern.MethodTasksUpdate:
			return rpc.Errorf(rpc.CodeMethodNotFound,
				"Method not found: %q is a %s method; a %s session (initialize, Mcp-Session-Id) cannot use it",
				method, modern.ProtocolVersion, legacy.ProtocolVersion)
		}
		return rpc.Errorf(rpc.CodeMethodNotFound, "Method not found: %q", method)
	}
	return modern.ErrMethodNotFound(method)
}

// served reports whether route answers method.
func served(route bodyRoute, method string, request bool) bool {
	switch route {
	case routeLegacyFace:
		if request {
			return legacyFaceMethods[method]
		}
		return legacyFaceNotifications[method]
	case routeModernFace:
		// Every modern notification is accepted and dropped by the face.
		return !request || modernface.Serves(method)
	}
	return true
}

// checkParams returns what is wrong with a request's params for the faces,
// in words for the client ("" when nothing is).
func checkParams(method string, p *paramsView, clientEra era.Era) string {
	switch method {
	case legacy.MethodToolsCall:
		if !isString(p.raw.name) {
			return fmt.Sprintf("tools/call needs params.name, the tool's name as a string (got %s)", kindOf(p.raw.name))
		}
		if a := p.raw.arguments; a != nil && string(a) != "null" && !isObject(a) {
			return fmt.Sprintf("params.arguments must be a JSON object of the tool's arguments (got %s)", kindOf(a))
		}
		task := p.raw.task
		if task == nil || clientEra == era.Modern {
			return "" // 2026-07-28 ignores a task param (M-66)
		}
		if !isObject(task) {
			return fmt.Sprintf("params.task must be a JSON object such as {\"ttl\": 60000} (got %s)", kindOf(task))
		}
		var ttl []byte
		for k, v := range rawjson.All(task) {
			if string(rawjson.KeyBytes(k)) == "ttl" {
				ttl = v
			}
		}
		if ttl != nil && string(ttl) != "null" && !isMillis(ttl) {
			return fmt.Sprintf("params.task.ttl must be a whole, non-negative number of milliseconds (got %s)", clip(ttl))
		}
	case legacy.MethodTasksGet, legacy.MethodTasksResult, legacy.MethodTasksCancel, modern.MethodTasksUpdate:
		if !isString(p.raw.taskID) {
			return fmt.Sprintf("%s needs params.taskId, the task's id as a string (got %s)", method, kindOf(p.raw.taskID))
		}
	}
	return ""
}

// maxNesting is how deep a request body may nest objects and arrays
// (rawjson.DefaultMaxDepth, 128 levels): deeper bodies are refused before
// anything recursive decodes them.
const maxNesting = rawjson.DefaultMaxDepth

// The faces split a message, its params and params._meta member by member
// (about 64 bytes each, several times over), so their member counts are
// bounded: no MCP request has more than a handful of each, and a client's
// own data goes in a tool's arguments, which are forwarded as they are.
const (
	maxMessageMembers = 64
	maxParamsMembers  = 1024
)

// nestingError is scanJSON's refusal of a body nested deeper than
// maxNesting: valid JSON or not, it is too deep to be read (-32600, not
// -32700: it may well be JSON).
type nestingError = rawjson.DepthError

// scanJSON checks that t is exactly one JSON value nested at most
// maxNesting levels deep (else a *nestingError) and reports the first
// member name that appears twice in one object (as a dotted path). Its work
// is linear in len(t): one depth pass, json.Valid, and one pass over the
// bytes that keeps the open objects' names as offsets (a dotted path is
// built once, for the duplicate it reports); an object of many members is
// checked by sorting its names when it closes, not by comparing each name
// with every other.
func scanJSON(t []byte) (dup string, err error) {
	if err := rawjson.CheckDepth(t, maxNesting); err != nil {
		return "", err
	}
	if !rawjson.Valid(t) {
		return "", syntaxError(t)
	}
	return scanValidJSON(t), nil
}

// syntaxError words what is wrong with t, which json.Valid refused and
// which nests at most maxNesting levels. encoding/json's validity check runs
// before Unmarshal decodes anything, so this is one more linear pass that
// allocates only the error.
func syntaxError(t []byte) error {
	var v struct{}
	err := json.Unmarshal(t, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return errors.New("invalid JSON")
	}
	switch {
	case strings.HasPrefix(se.Error(), "unexpected end of JSON input"):
		return errors.New("the JSON ends before the message is complete")
	case strings.Contains(se.Error(), "after top-level value"):
		return fmt.Errorf("unexpected data after the JSON-RPC message at offset %d; send exactly one JSON value per request", se.Offset-1)
	}
	return fmt.Errorf("invalid JSON at offset %d: %s", se.Offset-1, se.Error())
}

// smallObject is how many names of one object are compared with each
// other as they come; an object with more is checked once, when it
// closes, by sorting its names (n log n, not n²).
const smallObject = 16

// nameSpan is a member name scanValidJSON keeps, in 8 bytes (an object of
// many members keeps one per member): t[off:end] of the body, or, when off
// is negative, decoded[-off-1:end] of the side buffer, for a name with an
// escape or invalid UTF-8 (compared as encoding/json decodes it), which
// holds its offset in the body in the 4 bytes before it.
type nameSpan struct{ off, end int32 }

// at is the offset of the name's opening quote in the body.
func (s nameSpan) at(decoded []byte) int32 {
	if s.off < 0 {
		return int32(binary.LittleEndian.Uint32(decoded[-s.off-5:]))
	}
	return s.off - 1
}

// scanFrame is one open object or array of scanValidJSON.
type scanFrame struct {
	name  nameSpan // the member name this container is the value of
	named bool     // (false at the top and for array elements)
	obj   bool
	keys  int32 // names[keys:] are this object's names so far
}

// nameText is the name s spells.
func nameText(t, decoded []byte, s nameSpan) []byte {
	if s.off < 0 {
		return decoded[-s.off-1 : s.end]
	}
	return t[s.off:s.end]
}

// dupPath is the dotted path of name inside the open containers.
func dupPath(t, decoded []byte, stack []scanFrame, name nameSpan) string {
	var path []byte
	join := func(name []byte) {
		if len(path) > 0 {
			path = append(path, '.')
		}
		path = append(path, name...)
	}
	for _, f := range stack {
		if f.named {
			join(nameText(t, decoded, f.name))
		}
	}
	join(nameText(t, decoded, name))
	return string(path)
}

// scanValidJSON is scanJSON's duplicate scan over t, one valid JSON value
// nested at most maxNesting levels, in one pass. Names are kept as offsets,
// so the stacks of an ordinary message take a few hundred bytes of the
// goroutine's stack. Of several duplicates it reports the one whose second
// occurrence comes first, with its dotted path (an empty name twice at the
// top has the empty path, which reads as none, as it always did).
func scanValidJSON(t []byte) (dup string) {
	if int64(len(t)) > math.MaxInt32 {
		return "" // beyond any body limit
	}
	var decoded []byte
	var stackBuf [16]scanFrame
	var namesBuf [48]nameSpan
	stack, names := stackBuf[:0], namesBuf[:0]
	dupAt := int32(-1)
	var lastKey nameSpan // the name whose value comes next (object)
	expectKey := false   // the next string is a member name
	for i := 0; i < len(t); i++ {
		switch c := t[i]; c {
		case '{', '[':
			f := scanFrame{obj: c == '{', keys: int32(len(names))}
			if n := len(stack); n > 0 && stack[n-1].obj {
				f.name, f.named = lastKey, true
			}
			stack = append(stack, f)
			expectKey = c == '{'
		case ',':
			expectKey = stack[len(stack)-1].obj
		case '}', ']':
			f := stack[len(stack)-1]
			if own := names[f.keys:]; len(own) > smallObject {
				// Sorted, equal names sit side by side, the later one
				// (stable sort) being the duplicate.
				slices.SortStableFunc(own, func(a, b nameSpan) int {
					return bytes.Compare(nameText(t, decoded, a), nameText(t, decoded, b))
				})
				for k := 1; k < len(own); k++ {
					if at := own[k].at(decoded); (dupAt < 0 || at < dupAt) && bytes.Equal(nameText(t, decoded, own[k-1]), nameText(t, decoded, own[k])) {
						if p := dupPath(t, decoded, stack, own[k]); p != "" {
							dupAt, dup = at, p
						}
					}
				}
			}
			names = names[:f.keys]
			stack = stack[:len(stack)-1]
			expectKey = false
		case '"':
			j, esc := i+1, false
			for t[j] != '"' {
				if t[j] == '\\' {
					esc = true
					j++
				}
				j++
			}
			if expectKey {
				expectKey = false
				name := nameSpan{off: int32(i + 1), end: int32(j)}
				if esc || !utf8.Valid(t[i+1:j]) {
					var s string
					_ = json.Unmarshal(t[i:j+1], &s) // a valid string literal
					decoded = binary.LittleEndian.AppendUint32(decoded, uint32(i))
					name = nameSpan{off: -int32(len(decoded)) - 1, end: int32(len(decoded) + len(s))}
					decoded = append(decoded, s...)
				}
				if own := names[stack[len(stack)-1].keys:]; len(own) < smallObject {
					for _, k := range own {
						if bytes.Equal(nameText(t, decoded, k), nameText(t, decoded, name)) {
							if at := name.at(decoded); dupAt < 0 || at < dupAt {
								if p := dupPath(t, decoded, stack, name); p != "" {
									dupAt, dup = at, p
								}
							}
							break
						}
					}
				}
				if len(names) == cap(names) {
					// Doubled, not append's 1.25× for large slices: an
					// object of 87,000 names then allocates about twice
					// their 8 bytes each, not five times.
					names = slices.Grow(names, len(names))
				}
				names = append(names, name)
				lastKey = name
			}
			i = j
		}
	}
	return dup
}

func invalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

func parseError(format string, args ...any) verdict {
	return verdict{err: rpc.Errorf(rpc.CodeParseError, "Parse error: "+format, args...), id: nullID}
}

func invalidRequest(id json.RawMessage, format string, args ...any) verdict {
	return verdict{err: rpc.Errorf(rpc.CodeInvalidRequest, "Invalid Request: "+format, args...), id: id}
}

func invalidParams(id json.RawMessage, format string, args ...any) verdict {
	return verdict{err: rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: "+format, args...), id: id}
}

// kindOf names the JSON type of raw for a message, with the value of a
// number (the usual mistake: 5 for a name, 1.5 for milliseconds).
func kindOf(raw json.RawMessage) string {
	k := modern.JSONKind(raw)
	if k == "a number" {
		n := bytes.TrimSpace(raw)
		if len(n) > 40 { // a hostile number is not echoed whole
			return fmt.Sprintf("%s (%s…, %d digits)", k, n[:24], len(n))
		}
		return k + " (" + string(n) + ")"
	}
	return k
}

// clip is raw for a message, cut when it is long (a hostile value is not
// echoed whole).
func clip(raw []byte) string {
	if len(raw) > 40 {
		return fmt.Sprintf("%s… (%d bytes)", raw[:24], len(raw))
	}
	return string(raw)
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// isString: a non-empty JSON string (raw is valid JSON without surrounding
// whitespace; a literal with anything between its quotes decodes to a
// non-empty string).
func isString(raw []byte) bool {
	return len(raw) > 2 && raw[0] == '"'
}

// validID: a JSON-RPC id is a string or an integer (MCP: never null).
func validID(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return false
	}
	if t[0] == '"' {
		return true
	}
	_, err := strconv.ParseInt(string(t), 10, 64)
	return err == nil
}

// isMillis: a whole, non-negative number (1.5 and -1 are not; 1e3 is).
func isMillis(raw json.RawMessage) bool {
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	return err == nil && f >= 0 && f == float64(int64(f)) && (raw[0] >= '0' && raw[0] <= '9')
}

// errorStatus is the HTTP status of an error the router answers itself:
// modern clients get 404 for an unknown method (M-42) and 400 otherwise;
// legacy clients get 400 when the message could not be read as a request
// (parse error, no id) and 200 with the JSON-RPC error for a request
// (SDK clients surface the JSON-RPC error of a 200, not of a 4xx).
func errorStatus(clientEra era.Era, v verdict) int {
	if clientEra == era.Modern {
		if v.err.Code == rpc.CodeMethodNotFound {
			return http.StatusNotFound
		}
		return http.StatusBadRequest
	}
	if v.err.Code == rpc.CodeParseError || string(v.id) == "null" {
		return http.StatusBadRequest
	}
	return http.StatusOK
}
