package mcpio

import (
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// DecodeMessage agrees with jsonrpc.DecodeMessage on every body: the fast
// path where it applies, go-sdk's own decoding (and errors) elsewhere.
func TestDecodeMessageAgreesWithGoSDK(t *testing.T) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","id":"a\u0062","method":"tasks/get","params":{}}`,
		`{"jsonrpc":"2.0","id":-42,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}`,
		`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}]}}`,
		`{"jsonrpc":"2.0","id":"s","result":{}}`,
		`{"jsonrpc":"2.0","id":7,"result":null}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"m","data":{"a":1}}}`,
		`{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1e3,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1234567890123456789,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}`,
		`{"jsonrpc":"1.0","id":1,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":5}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","Params":{}}`,
		`{"jsonrpc":"2.0","id":true,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"x"`,
		`[{"jsonrpc":"2.0","id":1,"method":"x"}]`,
	} {
		want, werr := jsonrpc.DecodeMessage([]byte(body))
		got, gerr := DecodeMessage([]byte(body))
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Fatalf("%s: error %v, want %v", body, gerr, werr)
		}
		if werr != nil {
			continue
		}
		switch w := want.(type) {
		case *jsonrpc.Request:
			g, ok := got.(*jsonrpc.Request)
			if !ok || g.ID != w.ID || g.Method != w.Method || string(g.Params) != string(w.Params) {
				t.Fatalf("%s: decoded %#v, want %#v", body, got, want)
			}
		case *jsonrpc.Response:
			g, ok := got.(*jsonrpc.Response)
			if !ok || g.ID != w.ID || string(g.Result) != string(w.Result) || !reflect.DeepEqual(g.Error, w.Error) {
				t.Fatalf("%s: decoded %#v, want %#v", body, got, want)
			}
		}
	}
}
