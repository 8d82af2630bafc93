package legacyup

import (
	"encoding/json"
	"strings"
	"testing"
)

// progressTokenOf reads what a decode into a struct read before it,
// without decoding the arguments.
func TestProgressTokenOfMatchesDecode(t *testing.T) {
	for _, params := range []string{
		`{"name":"echo","arguments":{"s":"` + strings.Repeat("x", 1000) + `"},"_meta":{"progressToken":"p-1"}}`,
		`{"_META":{"progresstoken": 7 }}`,
		`{"_meta":{"progressToken":1},"_meta":{"other":2}}`,
		`{"_meta":{"progressToken":null}}`,
		`{"arguments":{"_meta":{"progressToken":"inner"}}}`,
		`{}`,
	} {
		var p struct {
			Meta struct {
				Token json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		}
		if err := json.Unmarshal([]byte(params), &p); err != nil {
			t.Fatal(err)
		}
		want := string(p.Meta.Token)
		if want == "null" {
			want = ""
		}
		if got := progressTokenOf([]byte(params)); got != want {
			t.Errorf("progressTokenOf(%.60s) = %q, a decode gives %q", params, got, want)
		}
	}
}
