package router

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/modern"
)

// Every JSON-RPC message the router reads is decoded once, by one walk over
// its members (rawjson.All) into the small views below, and shared: a client
// POST body (clientMsg) serves era detection, checkBody and the wire meter;
// an answer (wireMsg) serves the client-side meter and, on passthrough, the
// upstream meter too. Nothing on the request path decodes a body a second
// time (TestReadClientMsgAllocs keeps it so).

// clientMsg is one client POST body as the router reads it.
type clientMsg struct {
	body []byte // without surrounding whitespace
	// badUTF8 is the offset of the body's first invalid UTF-8 byte (-1:
	// none); syntax what is wrong with it as JSON (nil: one JSON value);
	// dup the first member name that appears twice in one object.
	badUTF8 int
	syntax  error
	dup     string
	// raw are the top-level members of an object body, as written.
	raw rawMembers
	// wire is the meter's view; wireOK false when the members do not have
	// the types the meter reads (it then counts the request as "other").
	wire   wireMsg
	wireOK bool
	// era is what the client-era rule reads (era.Client).
	era era.Signals
}

// rawMembers are members of a message by name, each value as written (the
// last one of a duplicated name: checkBody refuses duplicates anyway); nil
// when absent.
type rawMembers struct {
	jsonrpc, id, method, params, result, error []byte
}

// readClientMsg reads a client POST body once for everything the router
// needs to know about it.
func readClientMsg(body []byte) *clientMsg {
	m := &clientMsg{body: bytes.TrimSpace(body), badUTF8: invalidUTF8(body)}
	if len(m.body) == 0 {
		m.era.Body = era.BodyEmpty
		return m
	}
	m.dup, m.syntax = scanJSON(body)
	switch {
	case m.body[0] != '{':
		m.era.Body = era.BodyOther
		return m
	case m.syntax != nil:
		m.era.Body = era.BodyMalformed
		return m
	}
	// Invalid UTF-8 inside strings is still read (as encoding/json reads
	// it, with U+FFFD): checkBody refuses the body, the meter counts it
	// under its method.
	m.wireOK = m.wire.read(m.body, &m.raw)
	// Era detection needs only method, params and params._meta to have
	// their types (era.BodyShape).
	m.era.Body = era.BodyMalformed
	if kindOK(m.raw.method, '"') && kindOK(m.raw.params, '{') && kindOK(m.wire.Params.raw.meta, '{') {
		m.era.Body = era.BodyObject
		m.era.HasMethod = m.wire.hasMethod
		m.era.Method = m.wire.Method
		m.era.MetaProtocolVersion = m.wire.Params.metaProtocolVersion
	}
	return m
}

// kindOK: raw is absent, null, or starts with want.
func kindOK(raw []byte, want byte) bool {
	return len(raw) == 0 || raw[0] == want || raw[0] == 'n'
}

// wireMsg is the part of a JSON-RPC message the meters read.
type wireMsg struct {
	ID        json.RawMessage // as written; nil when absent
	Method    string
	hasMethod bool // a non-null method
	Params    paramsView
	hasParams bool // non-null params
	Result    resultView
	hasResult bool // a non-null result
	ErrorCode int64
	// ErrorMessage is the error's message (for the refusal log line).
	ErrorMessage string
	hasError     bool // a non-null error
	// taskCancelled: the error is "Task was cancelled" (L-41), the
	// expected answer to tasks/result of a cancelled task, not a failure.
	taskCancelled bool
	// members counts the message's own members; Params.members those of
	// params and of params._meta (checkBody bounds them).
	members int
}

type implView struct {
	Name    string
	Version string
	// missing marks a session id looked up in vain (negative cache).
	missing bool
}

// paramsView is what the router and the meter read of a request's params.
type paramsView struct {
	// MetaProtocolVersion is the per-request _meta's protocol version
	// (M-01); metaProtocolVersion whether the member is there at all.
	MetaProtocolVersion string
	metaProtocolVersion bool
	// MetaClientInfo is the per-request _meta's clientInfo (modern).
	MetaClientInfo    implView
	hasMetaClientInfo bool
	// ClientInfo is initialize's.
	ClientInfo    implView
	hasClientInfo bool
	TaskID        string
	// members and metaMembers count the members of params and of _meta.
	members, metaMembers int
	// raw keeps the members checkBody and the meter judge or walk later.
	raw struct {
		meta, name, arguments, task, taskID, inputResponses []byte
	}
}

// resultView is what the meter reads of an answer's result.
type resultView struct {
	IsError    bool
	ResultType string
	// TaskID: a modern flat CreateTaskResult or DetailedTask.
	TaskID string
	// TaskTaskID: a legacy nested CreateTaskResult's task.taskId.
	TaskTaskID string
	// inputRequests is the raw inputRequests object (modern MRTR).
	inputRequests []byte
}

// decodeWire reads one message (an answer, a server→client request, a
// stdio line): false when it is not one JSON object with the members' types
// the meter reads.
// m is the caller's (on its stack: nothing keeps a view past the call).
func decodeWire(b []byte, m *wireMsg) bool {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' || !rawjson.Valid(b) {
		return false
	}
	var raw rawMembers
	return m.read(b, &raw)
}

// read fills m from obj (one object that has passed json.Valid) and raw
// with its top-level members; false when a member the meter reads has the
// wrong JSON type (as a reflective decode into typed fields would fail).
func (m *wireMsg) read(obj []byte, raw *rawMembers) bool {
	var d viewDec
	for k, v := range rawjson.All(obj) {
		m.members++
		switch string(rawjson.KeyBytes(k)) {
		case "jsonrpc":
			raw.jsonrpc = v
		case "id":
			raw.id, m.ID = v, v
		case "method":
			raw.method = v
			m.Method, m.hasMethod = d.str(v), v[0] == '"'
		case "params":
			raw.params = v
			m.hasParams = d.object(v)
			if m.hasParams {
				m.Params.read(v, &d)
			}
		case "result":
			raw.result = v
			m.hasResult = d.object(v)
			if m.hasResult {
				m.Result.read(v, &d)
			}
		case "error":
			raw.error = v
			m.hasError = d.object(v)
			if m.hasError {
				for ek, ev := range rawjson.All(v) {
					switch string(rawjson.KeyBytes(ek)) {
					case "code":
						m.ErrorCode = d.int(ev)
					case "message":
						m.taskCancelled = bytes.HasPrefix(ev, []byte(`"Task was cancelled`))
						var lenient viewDec // a message of another type is not the meter's concern
						m.ErrorMessage = lenient.str(ev)
					}
				}
			}
		}
	}
	return !d.bad
}

func (p *paramsView) read(obj []byte, d *viewDec) {
	for k, v := range rawjson.All(obj) {
		p.members++
		switch string(rawjson.KeyBytes(k)) {
		case "_meta":
			p.raw.meta = v
			if !d.object(v) {
				continue
			}
			for mk, mv := range rawjson.All(v) {
				p.metaMembers++
				switch string(rawjson.KeyBytes(mk)) {
				case modern.MetaKeyProtocolVersion:
					p.MetaProtocolVersion, p.metaProtocolVersion = d.str(mv), true
				case modern.MetaKeyClientInfo:
					p.hasMetaClientInfo = d.impl(mv, &p.MetaClientInfo)
				}
			}
		case "clientInfo":
			p.hasClientInfo = d.impl(v, &p.ClientInfo)
		case "name":
			p.raw.name = v
		case "arguments":
			p.raw.arguments = v
		case "task":
			p.raw.task = v
		case "taskId":
			p.raw.taskID = v
			p.TaskID = d.str(v)
		case "inputResponses":
			p.raw.inputResponses = v
			d.object(v)
		}
	}
}

func (r *resultView) read(obj []byte, d *viewDec) {
	for k, v := range rawjson.All(obj) {
		switch string(rawjson.KeyBytes(k)) {
		case "isError":
			r.IsError = d.bool(v)
		case "resultType":
			r.ResultType = d.str(v)
		case "taskId":
			r.TaskID = d.str(v)
		case "status":
			d.str(v)
		case "task":
			if d.object(v) {
				for tk, tv := range rawjson.All(v) {
					switch string(rawjson.KeyBytes(tk)) {
					case "taskId":
						r.TaskTaskID = d.str(tv)
					case "status":
						d.str(tv)
					}
				}
			}
		case "inputRequests":
			r.inputRequests = v
			if d.object(v) {
				for _, ir := range rawjson.All(v) {
					inputMethod(ir, d)
				}
			}
		}
	}
}

// inputMethod is the method of one inputRequests entry.
func inputMethod(ir []byte, d *viewDec) string {
	method := ""
	if d.object(ir) {
		for k, v := range rawjson.All(ir) {
			if string(rawjson.KeyBytes(k)) == "method" {
				method = d.str(v)
			}
		}
	}
	return method
}

// viewDec reads typed values out of raw JSON (valid, without surrounding
// whitespace) and remembers whether any had the wrong type. null reads as
// the zero value, as in encoding/json.
type viewDec struct{ bad bool }

func isNull(v []byte) bool { return len(v) == 0 || v[0] == 'n' }

func (d *viewDec) str(v []byte) string {
	switch {
	case isNull(v):
		return ""
	case v[0] != '"':
		d.bad = true
		return ""
	}
	return unquote(v)
}

func (d *viewDec) bool(v []byte) bool {
	switch {
	case isNull(v):
		return false
	case v[0] == 't':
		return true
	case v[0] != 'f':
		d.bad = true
	}
	return false
}

func (d *viewDec) int(v []byte) int64 {
	if isNull(v) {
		return 0
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		d.bad = true
	}
	return n
}

// object reports whether v is an object (false for absent or null; a
// value of another type is also bad).
func (d *viewDec) object(v []byte) bool {
	switch {
	case isNull(v):
		return false
	case v[0] != '{':
		d.bad = true
		return false
	}
	return true
}

func (d *viewDec) impl(v []byte, out *implView) bool {
	if !d.object(v) {
		return false
	}
	for k, iv := range rawjson.All(v) {
		switch string(rawjson.KeyBytes(k)) {
		case "name":
			out.Name = d.str(iv)
		case "version":
			out.Version = d.str(iv)
		}
	}
	return true
}

// unquote decodes a JSON string literal (valid JSON): as written when it
// has no escape and is valid UTF-8, else as encoding/json decodes it.
func unquote(lit []byte) string {
	inner := lit[1 : len(lit)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return internMethod(inner)
	}
	var s string
	_ = json.Unmarshal(lit, &s)
	return s
}

// knownNames are strings every message carries (methods, mostly): reading
// them returns the constant instead of a new string.
var knownNames = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{
		"initialize", "ping", "tools/list", "tools/call", "tasks/get", "tasks/result", "tasks/list", "tasks/cancel",
		"tasks/update", "server/discover", "subscriptions/listen", "notifications/initialized", "notifications/cancelled",
		"notifications/progress", "notifications/message", "resources/list", "resources/read", "prompts/list",
		"prompts/get", "logging/setLevel", "completion/complete", "elicitation/create", "sampling/createMessage",
		"roots/list", "2.0", modern.ProtocolVersion, "task", "complete", "completed", "working", "failed", "cancelled",
		"input_required",
	} {
		m[s] = s
	}
	return m
}()

func internMethod(b []byte) string {
	if s, ok := knownNames[string(b)]; ok {
		return s
	}
	return string(b)
}

// hasID reports whether the message carries a non-null id.
func (m *wireMsg) hasID() bool { return len(m.ID) > 0 && !isNull(m.ID) }
