package router

import (
	"strings"
	"testing"
)

// peekHeadCall, on the head of a large request, answers what decodeWire
// reads of the whole body, or leaves the body to it.
func TestPeekHeadCall(t *testing.T) {
	args := `{"s":"` + strings.Repeat("x", 100<<10) + `"}`
	for _, tc := range []struct {
		body   string
		answer bool // peekHeadCall answers from the head
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":` + args + `}}`, true},
		{`{"jsonrpc":"2.0","id":"a-\u00e9","method":"tools/call","params":{"arguments":` + args + `}}`, true},
		{`{"jsonrpc":"2.0","id":7,"method":5,"params":{"arguments":` + args + `}}`, true},
		{`{"jsonrpc":"2.0","method":"notifications/x","params":{"arguments":` + args + `}}`, false},
		{`{"jsonrpc":"2.0","id":7,"params":{"arguments":` + args + `},"method":"tools/call"}`, false},
		{`{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 5000) + `","method":"tools/call","params":{}}`, false},
	} {
		body := []byte(tc.body)
		var full wireMsg
		want := peekedCall{}
		if decodeWire(body, &full) && full.Method != "" && full.hasID() {
			want = peekedCall{method: full.Method, id: idKey(full.ID), call: true}
		}
		got, ok := peekHeadCall(body[:peekHead])
		if ok != tc.answer || ok && got != want {
			t.Errorf("peekHeadCall(%.50s…) = %+v, %v; the whole body gives %+v (answer from the head: %v)", body, got, ok, want, tc.answer)
		}
	}
}
