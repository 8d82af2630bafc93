package legacy

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// JSON-RPC envelopes. Faces usually get envelopes from go-sdk; these types
// serve transcripts, the typed tasks/* request decoders and any raw transport.
// Envelope problems are -32600, params problems -32602.

// Request is a JSON-RPC request with raw params.
type Request struct {
	ID     json.RawMessage // a string or a number; never null (L-84)
	Method string
	Params json.RawMessage // nil when absent
}

// Notification is a JSON-RPC notification with raw params.
type Notification struct {
	Method string
	Params json.RawMessage // nil when absent
}

// Response is a JSON-RPC response: exactly one of Result and Error is set.
type Response struct {
	// ID is a string or a number. Only an error response may lack it (nil),
	// for a request whose id could not be read; it is then omitted, as the
	// 2025-11-25 schema makes it optional but not nullable.
	ID     json.RawMessage
	Result json.RawMessage
	Error  *rpc.Error
}

type envelopeWire struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpc.Error      `json:"error,omitempty"`
}

// IntID returns a numeric JSON-RPC id.
func IntID(n int64) json.RawMessage { return json.RawMessage(strconv.AppendInt(nil, n, 10)) }

// StringID returns a string JSON-RPC id.
func StringID(s string) json.RawMessage { return mustMarshal(s) }

// validID reports whether v is a string or a number.
func validID(v []byte) bool {
	k := rawjson.Kind(v)
	return k == "a string" || k == "a number"
}

// envelope parses the common envelope members.
func envelope(data []byte, what string) (fields, error) {
	f, err := openObject(data, what, rpc.CodeInvalidRequest)
	if err != nil {
		return fields{}, err
	}
	v, ok := f.get("jsonrpc")
	if !ok || string(bytes.TrimSpace(v)) != `"2.0"` {
		return fields{}, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid Request: %s: jsonrpc must be \"2.0\"", what)
	}
	return f, nil
}

func invalidRequest(what, format string, a ...any) *rpc.Error {
	return rpc.Errorf(rpc.CodeInvalidRequest, "Invalid Request: "+what+": "+format, a...)
}

// method reads the required method member.
func (f fields) method() (string, error) {
	v, ok := f.get("method")
	var m string
	if !ok || rawjson.Kind(v) != "a string" || json.Unmarshal(v, &m) != nil || m == "" {
		return "", invalidRequest(f.what, "method must be a non-empty string")
	}
	return m, nil
}

// params returns the raw params, nil when absent or null; anything but an
// object is -32602 (MCP params are always objects).
func (f fields) params() (json.RawMessage, error) {
	v, ok := f.get("params")
	if !ok || rawjson.IsNull(v) {
		return nil, nil
	}
	if rawjson.Kind(v) != "an object" {
		return nil, InvalidParamsError("%s: params must be an object, got %s", f.what, rawjson.Kind(v))
	}
	return json.RawMessage(bytes.Clone(v)), nil
}

// DecodeRequest decodes a JSON-RPC request envelope. Not JSON → -32700; no
// jsonrpc "2.0", a missing or non-string/number id, or a missing method →
// -32600; params that are not an object → -32602.
func DecodeRequest(data []byte) (Request, error) {
	f, err := envelope(data, "request")
	if err != nil {
		return Request{}, err
	}
	id, ok := f.get("id")
	if !ok || !validID(id) {
		return Request{}, invalidRequest("request", "id must be a string or a number")
	}
	m, err := f.method()
	if err != nil {
		return Request{}, err
	}
	p, err := f.params()
	if err != nil {
		return Request{}, err
	}
	return Request{ID: json.RawMessage(bytes.Clone(id)), Method: m, Params: p}, nil
}

// Validate checks the id and method.
func (r Request) Validate() error {
	if !rawjson.Valid(r.ID) || !validID(r.ID) {
		return InternalError("request: id must be a string or a number")
	}
	if r.Method == "" {
		return InternalError("request: method is required")
	}
	if r.Params != nil && rawjson.Kind(r.Params) != "an object" {
		return InternalError("request %s: params must be an object", r.Method)
	}
	return nil
}

// MarshalJSON validates r and encodes the envelope with "jsonrpc": "2.0".
func (r Request) MarshalJSON() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(envelopeWire{JSONRPC: JSONRPCVersion, ID: r.ID, Method: r.Method, Params: r.Params})
}

// UnmarshalJSON decodes like DecodeRequest.
func (r *Request) UnmarshalJSON(data []byte) error { return assign(r, data, DecodeRequest) }

// DecodeNotification decodes a JSON-RPC notification envelope; an id makes it
// a request and is -32600.
func DecodeNotification(data []byte) (Notification, error) {
	f, err := envelope(data, "notification")
	if err != nil {
		return Notification{}, err
	}
	if _, ok := f.get("id"); ok {
		return Notification{}, invalidRequest("notification", "a notification must not have an id")
	}
	m, err := f.method()
	if err != nil {
		return Notification{}, err
	}
	p, err := f.params()
	if err != nil {
		return Notification{}, err
	}
	return Notification{Method: m, Params: p}, nil
}

// Validate checks the method and params.
func (n Notification) Validate() error {
	if n.Method == "" {
		return InternalError("notification: method is required")
	}
	if n.Params != nil && rawjson.Kind(n.Params) != "an object" {
		return InternalError("notification %s: params must be an object", n.Method)
	}
	return nil
}

// MarshalJSON validates n and encodes the envelope.
func (n Notification) MarshalJSON() ([]byte, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(envelopeWire{JSONRPC: JSONRPCVersion, Method: n.Method, Params: n.Params})
}

// UnmarshalJSON decodes like DecodeNotification.
func (n *Notification) UnmarshalJSON(data []byte) error { return assign(n, data, DecodeNotification) }

// DecodeResponse decodes a JSON-RPC response envelope: exactly one of result
// (an object) and error ({code, message}) must be present, else -32600. An
// error response may lack an id or carry null (both decode to a nil ID).
func DecodeResponse(data []byte) (Response, error) {
	f, err := envelope(data, "response")
	if err != nil {
		return Response{}, err
	}
	res, hasRes := f.get("result")
	ev, hasErr := f.get("error")
	if hasRes == hasErr {
		return Response{}, invalidRequest("response", "exactly one of result and error must be present")
	}
	var out Response
	switch id, ok := f.get("id"); {
	case ok && validID(id):
		out.ID = json.RawMessage(bytes.Clone(id))
	case hasErr && (!ok || rawjson.IsNull(id)):
	default:
		return Response{}, invalidRequest("response", "id must be a string or a number")
	}
	if hasRes {
		if rawjson.Kind(res) != "an object" {
			return Response{}, invalidRequest("response", "result must be an object, got %s", rawjson.Kind(res))
		}
		out.Result = json.RawMessage(bytes.Clone(res))
		return out, nil
	}
	ef, err := f.sub("error", ev)
	if err != nil {
		return Response{}, invalidRequest("response", "error must be an object, got %s", rawjson.Kind(ev))
	}
	cv, ok := ef.get("code")
	code, perr := strconv.ParseInt(string(bytes.TrimSpace(cv)), 10, 64)
	if !ok || perr != nil {
		return Response{}, invalidRequest("response", "error.code must be an integer")
	}
	msg, _, err := ef.str("message", true)
	if err != nil {
		return Response{}, invalidRequest("response", "error.message must be a string")
	}
	out.Error = &rpc.Error{Code: code, Message: msg}
	if dv, ok := ef.get("data"); ok {
		out.Error.Data = json.RawMessage(bytes.Clone(dv))
	}
	return out, nil
}

// Validate checks the id and that exactly one of Result and Error is set.
func (r Response) Validate() error {
	if (r.Result == nil) == (r.Error == nil) {
		return InternalError("response: exactly one of result and error must be set")
	}
	if r.ID == nil && r.Error == nil || r.ID != nil && (!rawjson.Valid(r.ID) || !validID(r.ID)) {
		return InternalError("response: id must be a string or a number")
	}
	if r.Result != nil && (!rawjson.Valid(r.Result) || rawjson.Kind(r.Result) != "an object") {
		return InternalError("response: result must be an object")
	}
	if r.Error != nil && r.Error.Data != nil && !rawjson.Valid(r.Error.Data) {
		return InternalError("response: error.data is not valid JSON")
	}
	return nil
}

// MarshalJSON validates r and encodes the envelope.
func (r Response) MarshalJSON() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(envelopeWire{JSONRPC: JSONRPCVersion, ID: r.ID, Result: r.Result, Error: r.Error})
}

// UnmarshalJSON decodes like DecodeResponse.
func (r *Response) UnmarshalJSON(data []byte) error { return assign(r, data, DecodeResponse) }

// ---- typed tasks/* envelopes ------------------------------------------------

// decodeTypedRequest decodes an envelope and checks its method; a different
// method is -32600 (the caller dispatched wrongly).
func decodeTypedRequest(data []byte, method string) (Request, error) {
	r, err := DecodeRequest(data)
	if err != nil {
		return Request{}, err
	}
	if r.Method != method {
		return Request{}, invalidRequest("request", "method is %s, expected %s", quote(r.Method), method)
	}
	return r, nil
}

func validateTyped(id json.RawMessage, method string, params interface{ Validate() error }) error {
	if !rawjson.Valid(id) || !validID(id) {
		return InternalError("%s request: id must be a string or a number", method)
	}
	return params.Validate()
}

func marshalTyped(id json.RawMessage, method string, params any) ([]byte, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, rpc.As(err)
	}
	return json.Marshal(Request{ID: id, Method: method, Params: p})
}

// GetTaskRequest is a whole tasks/get request.
type GetTaskRequest struct {
	ID     json.RawMessage
	Params GetTaskParams
}

// Validate checks the id and the params.
func (r GetTaskRequest) Validate() error { return validateTyped(r.ID, MethodTasksGet, r.Params) }

// MarshalJSON validates and encodes the request envelope.
func (r GetTaskRequest) MarshalJSON() ([]byte, error) {
	return marshalTyped(r.ID, MethodTasksGet, r.Params)
}

// UnmarshalJSON decodes like DecodeGetTaskRequest.
func (r *GetTaskRequest) UnmarshalJSON(data []byte) error {
	return assign(r, data, DecodeGetTaskRequest)
}

// DecodeGetTaskRequest decodes a whole tasks/get request.
func DecodeGetTaskRequest(data []byte) (GetTaskRequest, error) {
	r, err := decodeTypedRequest(data, MethodTasksGet)
	if err != nil {
		return GetTaskRequest{}, err
	}
	p, err := DecodeGetTaskParams(r.Params)
	return GetTaskRequest{ID: r.ID, Params: p}, err
}

// GetTaskPayloadRequest is a whole tasks/result request.
type GetTaskPayloadRequest struct {
	ID     json.RawMessage
	Params GetTaskPayloadParams
}

// Validate checks the id and the params.
func (r GetTaskPayloadRequest) Validate() error {
	return validateTyped(r.ID, MethodTasksResult, r.Params)
}

// MarshalJSON validates and encodes the request envelope.
func (r GetTaskPayloadRequest) MarshalJSON() ([]byte, error) {
	return marshalTyped(r.ID, MethodTasksResult, r.Params)
}

// UnmarshalJSON decodes like DecodeGetTaskPayloadRequest.
func (r *GetTaskPayloadRequest) UnmarshalJSON(data []byte) error {
	return assign(r, data, DecodeGetTaskPayloadRequest)
}

// DecodeGetTaskPayloadRequest decodes a whole tasks/result request.
func DecodeGetTaskPayloadRequest(data []byte) (GetTaskPayloadRequest, error) {
	r, err := decodeTypedRequest(data, MethodTasksResult)
	if err != nil {
		return GetTaskPayloadRequest{}, err
	}
	p, err := DecodeGetTaskPayloadParams(r.Params)
	return GetTaskPayloadRequest{ID: r.ID, Params: p}, err
}

// CancelTaskRequest is a whole tasks/cancel request.
type CancelTaskRequest struct {
	ID     json.RawMessage
	Params CancelTaskParams
}

// Validate checks the id and the params.
func (r CancelTaskRequest) Validate() error { return validateTyped(r.ID, MethodTasksCancel, r.Params) }

// MarshalJSON validates and encodes the request envelope.
func (r CancelTaskRequest) MarshalJSON() ([]byte, error) {
	return marshalTyped(r.ID, MethodTasksCancel, r.Params)
}

// UnmarshalJSON decodes like DecodeCancelTaskRequest.
func (r *CancelTaskRequest) UnmarshalJSON(data []byte) error {
	return assign(r, data, DecodeCancelTaskRequest)
}

// DecodeCancelTaskRequest decodes a whole tasks/cancel request.
func DecodeCancelTaskRequest(data []byte) (CancelTaskRequest, error) {
	r, err := decodeTypedRequest(data, MethodTasksCancel)
	if err != nil {
		return CancelTaskRequest{}, err
	}
	p, err := DecodeCancelTaskParams(r.Params)
	return CancelTaskRequest{ID: r.ID, Params: p}, err
}

// ListTasksRequest is a whole tasks/list request; its params may be absent.
type ListTasksRequest struct {
	ID     json.RawMessage
	Params ListTasksParams
}

// Validate checks the id and the params.
func (r ListTasksRequest) Validate() error { return validateTyped(r.ID, MethodTasksList, r.Params) }

// MarshalJSON validates and encodes the request envelope (params always
// present, {} on the first page).
func (r ListTasksRequest) MarshalJSON() ([]byte, error) {
	return marshalTyped(r.ID, MethodTasksList, r.Params)
}

// UnmarshalJSON decodes like DecodeListTasksRequest.
func (r *ListTasksRequest) UnmarshalJSON(data []byte) error {
	return assign(r, data, DecodeListTasksRequest)
}

// DecodeListTasksRequest decodes a whole tasks/list request.
func DecodeListTasksRequest(data []byte) (ListTasksRequest, error) {
	r, err := decodeTypedRequest(data, MethodTasksList)
	if err != nil {
		return ListTasksRequest{}, err
	}
	p, err := DecodeListTasksParams(r.Params)
	return ListTasksRequest{ID: r.ID, Params: p}, err
}

// TaskStatusNotification is a whole notifications/tasks/status message.
type TaskStatusNotification struct {
	Params TaskStatusNotificationParams
}

// Validate checks the params.
func (n TaskStatusNotification) Validate() error { return n.Params.Validate() }

// MarshalJSON validates and encodes the notification envelope.
func (n TaskStatusNotification) MarshalJSON() ([]byte, error) {
	p, err := json.Marshal(n.Params)
	if err != nil {
		return nil, rpc.As(err)
	}
	return json.Marshal(Notification{Method: MethodTaskStatus, Params: p})
}

// UnmarshalJSON decodes like DecodeTaskStatusNotification.
func (n *TaskStatusNotification) UnmarshalJSON(data []byte) error {
	return assign(n, data, DecodeTaskStatusNotification)
}

// DecodeTaskStatusNotification decodes a whole notifications/tasks/status
// message; params (the full Task) are required.
func DecodeTaskStatusNotification(data []byte) (TaskStatusNotification, error) {
	n, err := DecodeNotification(data)
	if err != nil {
		return TaskStatusNotification{}, err
	}
	if n.Method != MethodTaskStatus {
		return TaskStatusNotification{}, invalidRequest("notification", "method is %s, expected %s", quote(n.Method), MethodTaskStatus)
	}
	if n.Params == nil {
		return TaskStatusNotification{}, InvalidParamsError("notifications/tasks/status: params are required (the full Task)")
	}
	p, err := DecodeTaskStatusNotificationParams(n.Params)
	return TaskStatusNotification{Params: p}, err
}
