package face

import (
	"strings"
	"testing"
)

// legacyReady says "as they are" only for params legacyParams returns
// unchanged, and says it for a translated plain call.
func TestLegacyReady(t *testing.T) {
	for params, ready := range map[string]bool{
		`{"name":"echo","arguments":{"s":"` + strings.Repeat("x", 1000) + `"}}`:     true,
		`{"name":"echo","arguments":{},"_meta":{"progressToken":1}}`:                true,
		`{"name":"echo","arguments":null}`:                                          false,
		`{"name":"echo","_meta":{}}`:                                                false,
		`{"name":"echo","_meta":null}`:                                              false,
		`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}`:   false,
		`{"name":"echo","_meta":{"io.modelcontextprotocol/clientInfo":{},"a":1}}`:   false,
		`{"name":"echo","requestState":"s"}`:                                        false,
		`{"name":"echo","inputResponses":{}}`:                                       false,
		`{"name":"echo","\u005fmeta":{"io.modelcontextprotocol/logLevel":"debug"}}`: false,
		`[1]`: false,
	} {
		if got := legacyReady([]byte(params)); got != ready {
			t.Errorf("legacyReady(%.60s) = %v, want %v", params, got, ready)
		}
		if !ready {
			continue
		}
		out, err := legacyParams([]byte(params))
		if err != nil || string(out) != params {
			t.Errorf("legacyParams(%.60s) = %.60s, %v: legacyReady must only pass params it leaves as they are", params, out, err)
		}
	}
}
