package mcpio

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
)

// DecodeMessage decodes one JSON-RPC message as jsonrpc.DecodeMessage does,
// without its reflective decoder (which allocates tens of kilobytes per
// message) for the messages every call carries: a plain request or
// notification (members jsonrpc, method, id?, params? — an object) and a
// plain result (jsonrpc, id, result). Members must be spelled as the
// specification does and given once, the id a string or an integer of at
// most 15 digits. Any other body goes to jsonrpc.DecodeMessage, so its
// decoding and its errors stay go-sdk's. Params and Result share data's
// bytes.
func DecodeMessage(data []byte) (jsonrpc.Message, error) {
	if m, ok := plainMessage(data); ok {
		return m, nil
	}
	return jsonrpc.DecodeMessage(data)
}

// The members plainMessage reads, as bits.
const (
	memVersion = 1 << iota
	memID
	memMethod
	memParams
	memResult
)

// plainMessage is DecodeMessage's fast path (pure); false leaves data to
// jsonrpc.DecodeMessage.
func plainMessage(data []byte) (jsonrpc.Message, bool) {
	if !rawjson.Valid(data) || !rawjson.IsObject(data) {
		return nil, false
	}
	ms, err := rawjson.Members(data)
	if err != nil {
		return nil, false
	}
	var (
		seen           int
		id             jsonrpc.ID
		method         string
		params, result json.RawMessage
	)
	for _, m := range ms {
		bit := 0
		switch m.Key {
		case "jsonrpc":
			bit = memVersion
			if string(m.Val) != `"2.0"` {
				return nil, false
			}
		case "id":
			bit = memID
			var ok bool
			if id, ok = plainID(m.Val); !ok {
				return nil, false
			}
		case "method":
			bit = memMethod
			if rawjson.Kind(m.Val) != "a string" || json.Unmarshal(m.Val, &method) != nil {
				return nil, false
			}
		case "params":
			bit = memParams
			if !rawjson.IsObject(m.Val) {
				return nil, false
			}
			params = m.Val
		case "result":
			bit = memResult
			result = m.Val
		default:
			return nil, false
		}
		if seen&bit != 0 {
			return nil, false
		}
		seen |= bit
	}
	switch {
	case seen&memVersion == 0:
		return nil, false
	case seen&memMethod != 0 && seen&memResult == 0:
		return &jsonrpc.Request{ID: id, Method: method, Params: params}, true
	case seen == memVersion|memID|memResult:
		return &jsonrpc.Response{ID: id, Result: result}, true
	}
	return nil, false
}

// plainID reads a string id or an integer id of at most 15 digits (exact
// in the float64 go-sdk decodes ids through).
func plainID(v json.RawMessage) (jsonrpc.ID, bool) {
	switch rawjson.Kind(v) {
	case "a string":
		var s string
		if json.Unmarshal(v, &s) != nil {
			return jsonrpc.ID{}, false
		}
		id, err := jsonrpc.MakeID(s)
		return id, err == nil
	case "a number":
		digits := strings.TrimPrefix(string(v), "-")
		if len(digits) == 0 || len(digits) > 15 || strings.Trim(digits, "0123456789") != "" {
			return jsonrpc.ID{}, false
		}
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return jsonrpc.ID{}, false
		}
		id, err := jsonrpc.MakeID(float64(n))
		return id, err == nil
	}
	return jsonrpc.ID{}, false
}
