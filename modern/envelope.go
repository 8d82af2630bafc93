package modern

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// JSON-RPC 2.0 envelopes, decoded into go-sdk's jsonrpc types so faces can hand
// them to SDK transports unchanged.

// DecodeRequest decodes a JSON-RPC request or notification:
//   - not JSON → -32700;
//   - not an object, jsonrpc ≠ "2.0", method missing/empty/not a string, an
//     id that is null or not a string/integer (M-03), or result/error
//     members (a response, not a request) → -32600;
//   - params neither absent, null nor an object → -32602 (MCP params are objects).
//
// A request without id is a notification (IsCall() == false).
func DecodeRequest(data []byte) (*jsonrpc.Request, error) {
	if err := checkJSON("request", data); err != nil {
		return nil, err
	}
	if !isObject(data) {
		return nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid request: a JSON-RPC request must be a JSON object, got %s", jsonKind(data))
	}
	m, err := memberMap(data) // valid JSON: checkJSON said so
	if err != nil {
		return nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid request: %v", err)
	}
	if err := checkVersion(m); err != nil {
		return nil, err
	}
	if _, ok := m["result"]; ok {
		return nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid request: message has a \"result\" member; it is a response, not a request")
	}
	if _, ok := m["error"]; ok {
		return nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid request: message has an \"error\" member; it is a response, not a request")
	}
	mv, ok := m["method"]
	if !ok {
		return nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid request: missing \"method\"")
	}
	var method string
	if !isString(mv) || json.Unmarshal(mv, &method) != nil || method == "" {
		return nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid request: \"method\" must be a non-empty string, got %s", describe(mv))
	}
	req := &jsonrpc.Request{Method: method}
	if iv, ok := m["id"]; ok {
		id, ok := parseID(iv)
		if !ok {
			return nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid request: \"id\" must be a string or an integer (never null), got %s", describe(iv))
		}
		req.ID = id
	}
	if pv, ok := m["params"]; ok && !isNull(pv) {
		if !isObject(pv) {
			return nil, rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: %s params must be a JSON object, got %s", method, jsonKind(pv))
		}
		req.Params = trimRaw(pv)
	}
	return req, nil
}

func checkVersion(m map[string]json.RawMessage) error {
	v, ok := m["jsonrpc"]
	var s string
	if !ok || !isString(v) || json.Unmarshal(v, &s) != nil || s != "2.0" {
		return rpc.Errorf(rpc.CodeInvalidRequest, "Invalid request: \"jsonrpc\" must be \"2.0\"")
	}
	return nil
}

// DecodeResponse decodes a JSON-RPC response: exactly one of result (an
// object) and error ({code, message, data?}). The error, if any, is a
// *rpc.Error in Response.Error. Problems are -32700 (not JSON) or -32600.
func DecodeResponse(data []byte) (*jsonrpc.Response, error) {
	if err := checkJSON("response", data); err != nil {
		return nil, err
	}
	if !isObject(data) {
		return nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid response: a JSON-RPC response must be a JSON object, got %s", jsonKind(data))
	}
	m, err := memberMap(data) // valid JSON: checkJSON said so
	if err != nil {
		return nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid response: %v", err)
	}
	if err := checkVersion(m); err != nil {
		return nil, err
	}
	if _, ok := m["method"]; ok {
		return nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid response: message has a \"method\" member; it is a request, not a response")
	}
	resp := &jsonrpc.Response{}
	if iv, ok := m["id"]; ok && !isNull(iv) {
		id, ok := parseID(iv)
		if !ok {
			return nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid response: \"id\" must be a string or an integer, got %s", describe(iv))
		}
		resp.ID = id
	}
	rv, hasResult := m["result"]
	ev, hasError := m["error"]
	switch {
	case hasResult && hasError:
		return nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid response: has both \"result\" and \"error\"")
	case hasResult:
		if !isObject(rv) {
			return nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid response: \"result\" must be a JSON object, got %s", jsonKind(rv))
		}
		if !resp.ID.IsValid() {
			return nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid response: a result needs the \"id\" of its request")
		}
		resp.Result = trimRaw(rv)
	case hasError:
		r, err := newReader("response", "error.", ev)
		if err != nil {
			return nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid response: \"error\" must be a JSON object, got %s", jsonKind(ev))
		}
		e, err := readRPCError(r)
		if err != nil {
			return nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid response: %s", rpc.As(err).Message)
		}
		resp.Error = e
	default:
		return nil, rpc.Errorf(rpc.CodeInvalidRequest, "Invalid response: needs \"result\" or \"error\"")
	}
	return resp, nil
}

// EncodeRequest encodes {"jsonrpc":"2.0","id":…,"method":…,"params":…}.
// params may be nil, raw JSON (json.RawMessage / []byte) or any value that
// marshals to an object. An invalid id encodes a notification.
func EncodeRequest(id jsonrpc.ID, method string, params any) ([]byte, error) {
	if method == "" {
		return nil, encodeErr("request: method is required")
	}
	w := newWriter()
	w.field("jsonrpc", "2.0")
	if id.IsValid() {
		w.field("id", idValue(id))
	}
	w.field("method", method)
	if err := writeObjectMember(w, "params", params); err != nil {
		return nil, err
	}
	return w.bytes()
}

// EncodeNotification encodes {"jsonrpc":"2.0","method":…,"params":…}.
func EncodeNotification(method string, params any) ([]byte, error) {
	return EncodeRequest(jsonrpc.ID{}, method, params)
}

// EncodeResult encodes {"jsonrpc":"2.0","id":…,"result":…}; result must
// encode to an object.
func EncodeResult(id jsonrpc.ID, result any) ([]byte, error) {
	if !id.IsValid() {
		return nil, encodeErr("result response: id is required")
	}
	w := newWriter()
	w.field("jsonrpc", "2.0")
	w.field("id", idValue(id))
	if result == nil {
		return nil, encodeErr("result response: result is required")
	}
	if err := writeObjectMember(w, "result", result); err != nil {
		return nil, err
	}
	return w.bytes()
}

// EncodeError encodes {"jsonrpc":"2.0","id":…,"error":{code,message,data?}};
// an invalid id is omitted (an error about an unreadable request).
func EncodeError(id jsonrpc.ID, e *rpc.Error) ([]byte, error) {
	if e == nil {
		return nil, encodeErr("error response: error is required")
	}
	w := newWriter()
	w.field("jsonrpc", "2.0")
	if id.IsValid() {
		w.field("id", idValue(id))
	}
	ew := newWriter()
	ew.field("code", e.Code)
	ew.field("message", e.Message)
	if e.Data != nil {
		ew.raw("data", e.Data)
	}
	eb, err := ew.bytes()
	if err != nil {
		return nil, err
	}
	w.raw("error", eb)
	return w.bytes()
}

// writeObjectMember writes key: v when v is non-nil, requiring a JSON object.
func writeObjectMember(w *writer, key string, v any) error {
	var b []byte
	switch x := v.(type) {
	case nil:
		return nil
	case json.RawMessage:
		if x == nil {
			return nil
		}
		b = x
	case []byte:
		if x == nil {
			return nil
		}
		b = x
	default:
		var err error
		if b, err = marshal(v); err != nil {
			return err
		}
	}
	if !isObject(b) {
		return encodeErr("%s must be a JSON object, got %s", key, jsonKind(b))
	}
	w.raw(key, b)
	return nil
}
