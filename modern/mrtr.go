package modern

import (
	"encoding/json"
	"sort"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
)

// MRTR (multi round-trip requests, M-17, M-18, M-48): a server that needs client input
// answers with InputRequiredResult; the client fulfils each input request and
// retries the same request with inputResponses and the echoed requestState.
// Tasks reuse the InputRequests map in their input_required status and take
// answers through tasks/update (M-28).

// InputRequest is one server→client request embedded in inputRequests:
// {method, params} without jsonrpc or id.
type InputRequest struct {
	Method string
	// Params is the raw params object; nil = absent (allowed for roots/list).
	Params json.RawMessage
}

// InputKind names the three kinds of embedded request and response.
type InputKind string

// The three kinds; InputUnknown is a method or response this era does not define.
const (
	InputElicitation InputKind = "elicitation" // elicitation/create ↔ ElicitResult {action, content?}
	InputSampling    InputKind = "sampling"    // sampling/createMessage ↔ CreateMessageResult {role, content, model}
	InputRoots       InputKind = "roots"       // roots/list ↔ ListRootsResult {roots}
	InputUnknown     InputKind = ""
)

// Kind returns the kind of the request by its method.
func (r InputRequest) Kind() InputKind {
	switch r.Method {
	case MethodElicitationCreate:
		return InputElicitation
	case MethodSamplingCreateMessage:
		return InputSampling
	case MethodRootsList:
		return InputRoots
	}
	return InputUnknown
}

// ElicitationMode returns "form" or "url" for an elicitation/create request
// (params.mode; absent means "form"), "" for other requests.
func (r InputRequest) ElicitationMode() string {
	if r.Kind() != InputElicitation {
		return ""
	}
	var p struct {
		Mode string `json:"mode"`
	}
	if isObject(r.Params) && json.Unmarshal(r.Params, &p) == nil && p.Mode != "" {
		return p.Mode
	}
	return "form"
}

// RequiredCapability is the client capability r needs, as the
// data.requiredCapabilities of a -32021, and its name for messages
// ("elicitation.form", "elicitation.url", "sampling", "roots"). ok is false
// when no capability covers r (an unknown method or elicitation mode).
func (r InputRequest) RequiredCapability() (caps ClientCapabilities, name string, ok bool) {
	switch r.Kind() {
	case InputElicitation:
		mode := r.ElicitationMode()
		if mode != "form" && mode != "url" {
			return caps, "", false
		}
		caps.Elicitation = &Object{mode: json.RawMessage("{}")}
		return caps, "elicitation." + mode, true
	case InputSampling:
		caps.Sampling = &Object{}
		return caps, "sampling", true
	case InputRoots:
		caps.Roots = &Object{}
		return caps, "roots", true
	}
	return caps, "", false
}

// Validate checks an InputRequest we emit: a known method, and an object
// params where the schema requires one.
func (r InputRequest) Validate() error {
	switch r.Kind() {
	case InputUnknown:
		return encodeErr("InputRequest: method %q is not elicitation/create, sampling/createMessage or roots/list", r.Method)
	case InputElicitation, InputSampling:
		if !isObject(r.Params) {
			return encodeErr("InputRequest %s: params must be an object", r.Method)
		}
	case InputRoots:
		if r.Params != nil && !isObject(r.Params) {
			return encodeErr("InputRequest %s: params must be an object when present", r.Method)
		}
	}
	if r.Params != nil && !rawjson.Valid(r.Params) {
		return encodeErr("InputRequest %s: params is not valid JSON", r.Method)
	}
	return nil
}

// MarshalJSON encodes {method, params?} strictly.
func (r InputRequest) MarshalJSON() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	w := newWriter()
	w.field("method", r.Method)
	if r.Params != nil {
		w.raw("params", r.Params)
	}
	return w.bytes()
}

// UnmarshalJSON decodes leniently (unknown methods are kept).
func (r *InputRequest) UnmarshalJSON(data []byte) error {
	rd, err := topReader("input request", data)
	if err != nil {
		return err
	}
	v, err := readInputRequest(rd)
	if err != nil {
		return err
	}
	*r = v
	return nil
}

func readInputRequest(r *reader) (InputRequest, error) {
	m, err := r.reqStr("method")
	if err != nil {
		return InputRequest{}, err
	}
	p := r.raw("params")
	if p != nil && !isObject(p) {
		return InputRequest{}, r.fail("params", "must be an object, got %s", jsonKind(p))
	}
	return InputRequest{Method: m, Params: p}, nil
}

// InputRequests maps a server-assigned key to an embedded request. Keys are
// unique per request (MRTR) or per task lifetime (tasks, M-57).
type InputRequests map[string]InputRequest

// Keys returns the keys in sorted order, for deterministic processing.
func (m InputRequests) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Validate checks every entry.
func (m InputRequests) Validate() error {
	for _, k := range m.Keys() {
		if err := m[k].Validate(); err != nil {
			return encodeErr("inputRequests[%q]: %s", k, err.Error())
		}
	}
	return nil
}

// MarshalJSON encodes the map strictly; nil encodes as {}.
func (m InputRequests) MarshalJSON() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	w := newWriter()
	for _, k := range m.Keys() {
		w.field(k, m[k])
	}
	return w.bytes()
}

// UnmarshalJSON decodes leniently.
func (m *InputRequests) UnmarshalJSON(data []byte) error {
	return decodeInto(m, DecodeInputRequests, data)
}

// DecodeInputRequests decodes an inputRequests map.
func DecodeInputRequests(data []byte) (InputRequests, error) {
	r, err := topReader("inputRequests", data)
	if err != nil {
		return nil, err
	}
	return readInputRequests(r)
}

func readInputRequests(r *reader) (InputRequests, error) {
	out := make(InputRequests, len(r.m))
	for k := range r.m {
		c, err := r.child(k)
		if err != nil {
			return nil, err
		}
		ir, err := readInputRequest(c)
		if err != nil {
			return nil, err
		}
		out[k] = ir
	}
	return out, nil
}

// InputResponses maps the keys of InputRequests to the client's raw results
// (ElicitResult, CreateMessageResult or ListRootsResult).
type InputResponses map[string]json.RawMessage

// Keys returns the keys in sorted order.
func (m InputResponses) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Validate checks that every value is a JSON object.
func (m InputResponses) Validate() error {
	for _, k := range m.Keys() {
		if !isObject(m[k]) || !rawjson.Valid(m[k]) {
			return encodeErr("inputResponses[%q]: value must be a JSON object (ElicitResult, CreateMessageResult or ListRootsResult)", k)
		}
	}
	return nil
}

// MarshalJSON encodes the map strictly; nil encodes as {}.
func (m InputResponses) MarshalJSON() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	w := newWriter()
	for _, k := range m.Keys() {
		w.raw(k, m[k])
	}
	return w.bytes()
}

// UnmarshalJSON decodes leniently.
func (m *InputResponses) UnmarshalJSON(data []byte) error {
	return decodeInto(m, DecodeInputResponses, data)
}

// DecodeInputResponses decodes an inputResponses map; each value must be an object.
func DecodeInputResponses(data []byte) (InputResponses, error) {
	r, err := topReader("inputResponses", data)
	if err != nil {
		return nil, err
	}
	return readInputResponses(r)
}

func readInputResponses(r *reader) (InputResponses, error) {
	out := make(InputResponses, len(r.m))
	for k, v := range r.m {
		if !isObject(v) {
			return nil, r.fail(k, "must be an object (ElicitResult, CreateMessageResult or ListRootsResult), got %s", jsonKind(v))
		}
		out[k] = trimRaw(v)
	}
	return out, nil
}

func trimRaw(v json.RawMessage) json.RawMessage {
	t := v
	for len(t) > 0 && (t[0] == ' ' || t[0] == '\t' || t[0] == '\n' || t[0] == '\r') {
		t = t[1:]
	}
	for len(t) > 0 && (t[len(t)-1] == ' ' || t[len(t)-1] == '\t' || t[len(t)-1] == '\n' || t[len(t)-1] == '\r') {
		t = t[:len(t)-1]
	}
	return t
}

// ElicitAction is the action of an ElicitResult.
type ElicitAction string

// The three elicitation actions.
const (
	ElicitAccept  ElicitAction = "accept"
	ElicitDecline ElicitAction = "decline"
	ElicitCancel  ElicitAction = "cancel"
)

// ClassifyInputResponse tells the three response shapes apart the way go-sdk
// does: "action" → elicitation, "role" → sampling, "roots" → roots (M-48). A
// value that is none of them is -32602; an elicitation with an unknown action
// is -32602 too.
func ClassifyInputResponse(raw []byte) (InputKind, error) {
	r, err := topReader("input response", raw)
	if err != nil {
		return InputUnknown, err
	}
	switch {
	case r.has("action"):
		a, _, err := r.str("action")
		if err != nil {
			return InputUnknown, err
		}
		switch ElicitAction(a) {
		case ElicitAccept, ElicitDecline, ElicitCancel:
			return InputElicitation, nil
		}
		return InputUnknown, r.fail("action", "has unknown value %s (want accept, decline or cancel)", quoteShort(a))
	case r.has("role"):
		if _, _, err := r.str("role"); err != nil {
			return InputUnknown, err
		}
		return InputSampling, nil
	case r.has("roots"):
		if k := jsonKind(r.raw("roots")); k != "an array" {
			return InputUnknown, r.fail("roots", "must be an array, got %s", k)
		}
		return InputRoots, nil
	}
	return InputUnknown, invalidParams("input response", "neither an ElicitResult (action), a CreateMessageResult (role) nor a ListRootsResult (roots)")
}

// ElicitActionOf returns the action of an ElicitResult, false when raw is not one.
func ElicitActionOf(raw []byte) (ElicitAction, bool) {
	k, err := ClassifyInputResponse(raw)
	if err != nil || k != InputElicitation {
		return "", false
	}
	var p struct {
		Action ElicitAction `json:"action"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return "", false
	}
	return p.Action, true
}

// InputRequiredResult is the MRTR result {resultType:"input_required",
// inputRequests?, requestState?}; at least one of the two is present (M-48).
// RequestState is the raw JSON string token, kept verbatim so a client echoes
// it byte-for-byte and never inspects it (M-18).
type InputRequiredResult struct {
	InputRequests InputRequests   // nil = absent
	RequestState  json.RawMessage // raw JSON string; nil = absent
	Meta          Object
}

// RequestState returns the raw JSON token for a requestState string value
// (server side: the value it wants echoed).
func RequestState(s string) json.RawMessage {
	b, _ := marshal(s) // a Go string always encodes
	return b
}

// RequestStateValue returns the decoded requestState (server side only:
// clients must not inspect it, M-18).
func (r InputRequiredResult) RequestStateValue() (string, bool) {
	if r.RequestState == nil {
		return "", false
	}
	var s string
	if json.Unmarshal(r.RequestState, &s) != nil {
		return "", false
	}
	return s, true
}

// DecodeInputRequiredResult decodes an InputRequiredResult; resultType must be
// "input_required". Lenient: both fields absent is accepted (a client MAY
// retry at once); requestState must be a string when present.
func DecodeInputRequiredResult(data []byte) (InputRequiredResult, error) {
	r, err := topReader("InputRequiredResult", data)
	if err != nil {
		return InputRequiredResult{}, err
	}
	if err := readResultType(r, ResultInputRequired); err != nil {
		return InputRequiredResult{}, err
	}
	var out InputRequiredResult
	if r.has("inputRequests") {
		c, err := r.child("inputRequests")
		if err != nil {
			return out, err
		}
		if out.InputRequests, err = readInputRequests(c); err != nil {
			return out, err
		}
	}
	if v := r.raw("requestState"); v != nil {
		if !isString(v) {
			return out, r.fail("requestState", "must be a string, got %s", jsonKind(v))
		}
		out.RequestState = v
	}
	if out.Meta, err = r.object("_meta"); err != nil {
		return out, err
	}
	return out, nil
}

// Validate checks an InputRequiredResult we emit (M-48).
func (r InputRequiredResult) Validate() error {
	if r.InputRequests == nil && r.RequestState == nil {
		return encodeErr("InputRequiredResult: at least one of inputRequests and requestState is required (M-48)")
	}
	if r.RequestState != nil {
		var s string
		if !isString(r.RequestState) || json.Unmarshal(r.RequestState, &s) != nil {
			return encodeErr("InputRequiredResult: requestState must be a JSON string")
		}
	}
	if r.InputRequests != nil {
		return r.InputRequests.Validate()
	}
	return nil
}

// MarshalJSON encodes strictly.
func (r InputRequiredResult) MarshalJSON() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	w := newWriter()
	w.field("resultType", ResultInputRequired)
	if r.InputRequests != nil {
		w.field("inputRequests", r.InputRequests)
	}
	if r.RequestState != nil {
		w.raw("requestState", r.RequestState)
	}
	if r.Meta != nil {
		w.field("_meta", r.Meta)
	}
	return w.bytes()
}

// UnmarshalJSON decodes leniently.
func (r *InputRequiredResult) UnmarshalJSON(data []byte) error {
	return decodeInto(r, DecodeInputRequiredResult, data)
}

// InputResponseParams is what a server reads from a retried MRTR request:
// inputResponses, the echoed requestState and _meta (InputResponseRequestParams).
type InputResponseParams struct {
	InputResponses InputResponses  // nil = absent
	RequestState   json.RawMessage // raw JSON string; nil = absent
	Meta           RequestMeta
}

// DecodeInputResponseParams reads the MRTR retry fields of request params.
func DecodeInputResponseParams(params []byte) (InputResponseParams, error) {
	var out InputResponseParams
	if isNull(params) {
		return out, nil
	}
	r, err := topReader("request params", params)
	if err != nil {
		return out, err
	}
	if r.has("inputResponses") {
		c, err := r.child("inputResponses")
		if err != nil {
			return out, err
		}
		if out.InputResponses, err = readInputResponses(c); err != nil {
			return out, err
		}
	}
	if v := r.raw("requestState"); v != nil {
		if !isString(v) {
			return out, r.fail("requestState", "must be a string, got %s", jsonKind(v))
		}
		out.RequestState = v
	}
	if out.Meta, err = readMetaField(r); err != nil {
		return out, err
	}
	return out, nil
}

// RetryParams builds the params of an MRTR retry (M-17, M-18): the original
// params unchanged, plus inputResponses (omitted when empty), plus
// requestState echoed byte-for-byte when the server sent one — and without
// requestState when it did not. inputResponses/requestState left over from an
// earlier round are replaced. The caller sends it under a new JSON-RPC id (M-03).
func RetryParams(original []byte, responses InputResponses, requestState json.RawMessage) (json.RawMessage, error) {
	ms, err := rawMembers("request params", original)
	if err != nil {
		return nil, err
	}
	kept := make([]rawjson.Member, 0, len(ms)+2)
	for _, m := range ms {
		if m.Key != "inputResponses" && m.Key != "requestState" {
			kept = append(kept, m)
		}
	}
	if len(responses) > 0 {
		b, err := marshal(responses)
		if err != nil {
			return nil, err
		}
		kept = rawjson.With(kept, "inputResponses", b)
	}
	if requestState != nil {
		if !isString(requestState) || !rawjson.Valid(requestState) {
			return nil, encodeErr("retry params: requestState must be the raw JSON string the server sent")
		}
		kept = rawjson.With(kept, "requestState", requestState)
	}
	return writeRawMembers(kept)
}
