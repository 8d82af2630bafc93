package modernface

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/modern"
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

// withSortedMember writes what the map round trip it replaced wrote.
func TestWithSortedMemberMatchesMap(t *testing.T) {
	task := json.RawMessage(`{"ttl":60000}`)
	for _, params := range []string{
		`{"name":"echo","arguments":{"s":"` + strings.Repeat("x<&>", 1000) + `", "n" : [1, 2.50]},"_meta":{"progressToken":"p"}}`,
		`{"z":1,"a":2,"task":{"ttl":1},"A":3,"é":4,"\u00e9x":5,"b\u0041":6,"<k>":7}`,
		`{"name":"a","name":"b","task":null}`,
		` { "name" : "echo" } `,
		`{}`,
	} {
		var o map[string]json.RawMessage
		if err := json.Unmarshal([]byte(params), &o); err != nil {
			t.Fatal(err)
		}
		o["task"] = task
		want, err := modern.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := withSortedMember([]byte(params), "task", task)
		if !ok || string(got) != string(want) {
			t.Errorf("withSortedMember(%.60s) = %.120s, %v; the map round trip writes %.120s", params, got, ok, want)
		}
	}
	for _, bad := range []string{`[1]`, `"x"`, `{"a":`, ``} {
		if _, ok := withSortedMember([]byte(bad), "task", task); ok {
			t.Errorf("withSortedMember(%q) accepted it", bad)
		}
	}
}
