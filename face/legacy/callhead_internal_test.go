package legacyface

import (
	"encoding/json"
	"strings"
	"testing"
)

// callHead reads what a decode into a struct read before it, without
// decoding the arguments.
func TestCallHeadMatchesDecode(t *testing.T) {
	for _, params := range []string{
		`{"name":"echo","arguments":{"s":"` + strings.Repeat("x", 1000) + `"},"_meta":{"progressToken":"p-1"}}`,
		`{"Name":"a","name":"b\u00e9","_META":{"progresstoken": 7 }}`,
		`{"name":"x","_meta":{"progressToken":null}}`,
		`{"arguments":{"name":"inner"}}`,
		`{}`,
	} {
		var call struct {
			Name string `json:"name"`
			Meta struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		}
		if err := json.Unmarshal([]byte(params), &call); err != nil {
			t.Fatal(err)
		}
		name, token := callHead([]byte(params))
		if name != call.Name || string(token) != string(call.Meta.ProgressToken) {
			t.Errorf("callHead(%.60s) = %q, %s; a decode gives %q, %s", params, name, token, call.Name, call.Meta.ProgressToken)
		}
	}
}

// dropMetaKey's walk returns unchanged only what the map round trip left
// unchanged.
func TestDropMetaKeyUnchanged(t *testing.T) {
	key := "io.modelcontextprotocol/serverInfo"
	for obj, changed := range map[string]bool{
		`{"content":[{"type":"text","text":"` + strings.Repeat("x", 1000) + `"}]}`: false,
		`{"content":[],"_meta":{"a":1}}`:                                           false,
		`{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{},"a":1}}`:   true,
		`{"_meta":{"io.modelcontextprotocol/serverInfo":{}},"_meta":{"a":1}}`:      false,
		`{"content":{"_meta":{"io.modelcontextprotocol/serverInfo":{}}}}`:          false,
		`[1]`: false,
	} {
		got := dropMetaKey(json.RawMessage(obj), key)
		if (string(got) != obj) != changed {
			t.Errorf("dropMetaKey(%.60s) = %.80s; want changed %v", obj, got, changed)
		}
	}
}
