package legacyup

import (
	"bytes"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// encodeMessage writes what go-sdk writes, large params or not.
func TestEncodeMessageMatchesSDK(t *testing.T) {
	big := `{"name":"echo","arguments":{"s":"` + strings.Repeat("x<&>\u2028", 20000) + `","n":[1,2.50,{"a":null}]}}`
	ids := []jsonrpc.ID{{}, mustID(t, float64(0)), mustID(t, float64(42)), mustID(t, "id-\u00e9<&>\u2028\"")}
	for _, params := range []string{big, `{"x":1}`, `{"x" : 1,  "s":"` + strings.Repeat("y", 70000) + `"}`, ""} {
		for _, id := range ids {
			for _, method := range []string{"tools/call", "", "a<b>\u2029"} {
				msg := &jsonrpc.Request{ID: id, Method: method, Params: []byte(params)}
				want, err := jsonrpc.EncodeMessage(msg)
				if err != nil {
					t.Fatal(err)
				}
				got, err := encodeMessage(msg)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("encodeMessage(id %v, method %q, params %.40s…) = %.120s, %v; go-sdk writes %.120s", id, method, params, got, err, want)
				}
			}
		}
	}
}

func mustID(t *testing.T, v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
