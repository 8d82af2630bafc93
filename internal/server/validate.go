package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/legacy"
	legacyup "github.com/tasksbridge/tasksbridge/legacy/upstream"
	"github.com/tasksbridge/tasksbridge/modern"
	modernface "github.com/tasksbridge/tasksbridge/modern/face"
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
func checkBody(cm *clientMsg, route bodyRoute, clientEra legacyup.Era) verdict {
	if cm.badUTF8 >= 0 {
		return parseError("the body is not valid UTF-8 (first bad byte at offset %d); send the request encoded as UTF-8", cm.badUTF8)
	}
	t := cm.body
	if len(t) == 0 {
		return parseError("the body is empty; send one JSON-RPC message")
	}
	dup := cm.dup // offsets in messages count from the body's first byte
	if cm.syntax != nil {
		return verdict{err: rpc.Errorf(rpc.CodeParseError, "Parse error: %v", cm.syntax), id: nullID}
	}
	switch t[0] {
	case '{':
	case '[':
		if bytes.Equal(bytes.Join(bytes.Fields(t), nil), []byte("[]")) {
			return invalidRequest(nullID, "the body is an empty batch; send one JSON-RPC request object")
		}
		if dup != "" {
			return invalidRequest(nullID, "member %q appears twice in a batch message; each name may appear once per object", dup)
		}
		return verdict{} // a 2025-03-26 batch: the faces and the upstream judge it
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
func checkParams(method string, p *paramsView, clientEra legacyup.Era) string {
	switch method {
	case legacy.MethodToolsCall:
		if !isString(p.raw.name) {
			return fmt.Sprintf("tools/call needs params.name, the tool's name as a string (got %s)", kindOf(p.raw.name))
		}
		if a := p.raw.arguments; a != nil && string(a) != "null" && !isObject(a) {
			return fmt.Sprintf("params.arguments must be a JSON object of the tool's arguments (got %s)", kindOf(a))
		}
		task := p.raw.task
		if task == nil || clientEra == legacyup.EraModern {
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
			return fmt.Sprintf("params.task.ttl must be a whole, non-negative number of milliseconds (got %s)", ttl)
		}
	case legacy.MethodTasksGet, legacy.MethodTasksResult, legacy.MethodTasksCancel, modern.MethodTasksUpdate:
		if !isString(p.raw.taskID) {
			return fmt.Sprintf("%s needs params.taskId, the task's id as a string (got %s)", method, kindOf(p.raw.taskID))
		}
	}
	return ""
}

// scanJSON checks that t is exactly one JSON value and reports the first
// member name that appears twice in one object (as a dotted path).
func scanJSON(t []byte) (dup string, err error) {
	if dup, ok := scanValidJSON(t); ok {
		return dup, nil
	}
	return scanJSONTokens(t)
}

// scanValidJSON is scanJSON's allocation-light path, run on every POST: when
// t is one valid JSON value (json.Valid) it walks the bytes once and compares
// member names as they are written, keeping the names of the open objects
// in one stack (on the goroutine's stack for ordinary messages); the dotted
// path is only built for a duplicate. It gives up (ok false) on invalid
// JSON, whose error message scanJSONTokens words, and on a member name with
// an escape, whose decoded spelling only the token decoder compares.
func scanValidJSON(t []byte) (dup string, ok bool) {
	if !json.Valid(t) {
		return "", false
	}
	// Names are kept as offsets into t, so that the stacks of an ordinary
	// message take a few hundred bytes of the goroutine's stack.
	type span struct{ off, end int32 }
	type frame struct {
		name  span // the member name this container is the value of
		named bool // (false at the top and for array elements)
		obj   bool
		keys  int32 // names[keys:] are this object's names so far
	}
	if int64(len(t)) > math.MaxInt32 {
		return "", false
	}
	var stackBuf [16]frame
	var namesBuf [48]span
	stack, names := stackBuf[:0], namesBuf[:0]
	var lastKey span // the name whose value comes next (object)
	for i := 0; i < len(t); i++ {
		switch c := t[i]; c {
		case '{', '[':
			f := frame{obj: c == '{', keys: int32(len(names))}
			if n := len(stack); n > 0 && stack[n-1].obj {
				f.name, f.named = lastKey, true
			}
			stack = append(stack, f)
		case '}', ']':
			names = names[:stack[len(stack)-1].keys]
			stack = stack[:len(stack)-1]
		case '"':
			j := i + 1
			for t[j] != '"' {
				if t[j] == '\\' {
					j++
				}
				j++
			}
			n := len(stack)
			if n > 0 && stack[n-1].obj && isKeyPosition(t, i) {
				name := span{int32(i + 1), int32(j)}
				if bytes.IndexByte(t[name.off:name.end], '\\') >= 0 {
					return "", false
				}
				if dup == "" {
					for _, k := range names[stack[n-1].keys:] {
						if bytes.Equal(t[k.off:k.end], t[name.off:name.end]) {
							path := ""
							for _, f := range stack {
								if f.named {
									path = joinPath(path, t[f.name.off:f.name.end])
								}
							}
							dup = joinPath(path, t[name.off:name.end])
							break
						}
					}
				}
				names = append(names, name)
				lastKey = name
			}
			i = j
		}
	}
	return dup, true
}

// isKeyPosition reports whether the string at t[i] is a member name: the
// previous significant byte opens the object or separates members.
func isKeyPosition(t []byte, i int) bool {
	for i--; i >= 0; i-- {
		switch t[i] {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', ',':
			return true
		}
		return false
	}
	return false
}

func joinPath(path string, name []byte) string {
	if path == "" {
		return string(name)
	}
	return path + "." + string(name)
}

// scanJSONTokens is scanJSON with encoding/json's token decoder.
func scanJSONTokens(t []byte) (dup string, err error) {
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				name, _ := k.(string)
				p := name
				if path != "" {
					p = path + "." + name
				}
				if seen[name] && dup == "" {
					dup = p
				}
				seen[name] = true
				if err := walk(p); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(path); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if err := walk(""); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return "", fmt.Errorf("invalid JSON at offset %d: %s", se.Offset, se.Error())
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return "", errors.New("the JSON ends before the message is complete")
		}
		return "", fmt.Errorf("invalid JSON: %s", err.Error())
	}
	rest := t[dec.InputOffset():]
	if extra := bytes.TrimLeft(rest, " \t\r\n"); len(extra) > 0 {
		return "", fmt.Errorf("unexpected data after the JSON-RPC message at offset %d; send exactly one JSON value per request", len(t)-len(extra))
	}
	return dup, nil
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
		return k + " (" + string(bytes.TrimSpace(raw)) + ")"
	}
	return k
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
func errorStatus(clientEra legacyup.Era, v verdict) int {
	if clientEra == legacyup.EraModern {
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
