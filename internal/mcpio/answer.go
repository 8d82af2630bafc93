package mcpio

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// AppendResponse appends to b the JSON-RPC response to id: the error object
// errJSON when it is non-nil, the result otherwise (both JSON the server
// built; each face encodes its errors as its era's clients expect). An id
// that is not valid is written as null, as JSON-RPC says for a response
// whose request id is unknown.
func AppendResponse(b *bytes.Buffer, id jsonrpc.ID, result, errJSON json.RawMessage) {
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	switch v := id.Raw().(type) {
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	default:
		idb, err := json.Marshal(v)
		if err != nil || !id.IsValid() {
			idb = []byte("null")
		}
		b.Write(idb)
	}
	if errJSON != nil {
		b.WriteString(`,"error":`)
		b.Write(errJSON)
	} else {
		b.WriteString(`,"result":`)
		b.Write(result)
	}
	b.WriteByte('}')
}

// WriteJSON answers with body as application/json, with its Content-Length
// and status.
func WriteJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
