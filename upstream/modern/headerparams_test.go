package modernup

import (
	"encoding/json"
	"strings"
	"testing"
)

// headerParams reads what a decode into a struct read before it, without
// decoding the arguments.
func TestHeaderParamsMatchesDecode(t *testing.T) {
	for _, params := range []string{
		`{"name":"echo","arguments":{"s":"` + strings.Repeat("x", 1000) + `"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		`{"Name":"a","name":"b","URI":"u","taskid":"t","_META":{"io.modelcontextprotocol/protocolversion":"2025-11-25"}}`,
		`{"name":5,"uri":"r","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		`{"name":"\u00e9\"x","_meta":null}`,
		`{}`,
	} {
		var p struct {
			Name   string `json:"name"`
			URI    string `json:"uri"`
			TaskID string `json:"taskId"`
			Meta   struct {
				ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
			} `json:"_meta"`
		}
		err := json.Unmarshal([]byte(params), &p)
		got := headerParams([]byte(params))
		if err == nil && (got != headerFields{p.Name, p.URI, p.TaskID, p.Meta.ProtocolVersion}) {
			t.Errorf("headerParams(%.80s) = %+v, a decode gives %+v", params, got, p)
		}
		if err != nil && got.name != "" {
			t.Errorf("headerParams(%.80s): name %q from a non-string", params, got.name)
		}
	}
}
