package mcpio

import (
	"bytes"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The one answer writer: the envelope of a result or an error for each kind
// of id, and the application/json body with its length.
func TestAppendResponseAndWriteJSON(t *testing.T) {
	num, _ := jsonrpc.MakeID(float64(7))
	str, _ := jsonrpc.MakeID("a<b")
	for _, tc := range []struct {
		id          jsonrpc.ID
		res, errObj string
		want        string
	}{
		{num, `{"x":1}`, "", `{"jsonrpc":"2.0","id":7,"result":{"x":1}}`},
		{str, `{}`, "", `{"jsonrpc":"2.0","id":"a\u003cb","result":{}}`},
		{num, "", `{"code":-32602,"message":"m"}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"m"}}`},
		{jsonrpc.ID{}, "", `{"code":-32600,"message":"m"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"m"}}`},
	} {
		var b bytes.Buffer
		var eo []byte
		if tc.errObj != "" {
			eo = []byte(tc.errObj)
		}
		AppendResponse(&b, tc.id, []byte(tc.res), eo)
		if b.String() != tc.want {
			t.Errorf("got %s, want %s", b.String(), tc.want)
		}
	}
	rec := httptest.NewRecorder()
	WriteJSON(rec, 429, []byte(`{"a":1}`))
	if rec.Code != 429 || rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Content-Length") != "7" || rec.Body.String() != `{"a":1}` {
		t.Errorf("WriteJSON: %d %v %s", rec.Code, rec.Header(), rec.Body.String())
	}
}
