package legacy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/rpc"
)

const toolsList = `{"tools":[
 {"name":"quick","inputSchema":{"type":"object"}},
 {"name":"long_job","description":"d","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},
 {"name":"must","inputSchema":{"type":"object"},"execution":{"taskSupport":"required","vendor":1},"_meta":{"k":"v"}},
 {"name":"no","inputSchema":{"type":"object"},"execution":{"taskSupport":"forbidden"}}
],"nextCursor":"p2","_meta":{"m":1}}`

// TestTaskSupportL10 covers reading, defaulting and validating taskSupport.
func TestTaskSupportL10(t *testing.T) {
	check(t, "ListToolsResult", []byte(toolsList))
	got, err := ListToolsTaskSupport(json.RawMessage(toolsList))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]TaskSupport{"quick": TaskSupportForbidden, "long_job": TaskSupportOptional, "must": TaskSupportRequired, "no": TaskSupportForbidden}
	if len(got) != len(want) {
		t.Errorf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	for _, tc := range []struct{ in, frag string }{
		{`{"name":"x","execution":{"taskSupport":"sometimes"}}`, `execution.taskSupport must be one of forbidden, optional, required, got "sometimes"`},
		{`{"name":"x","execution":{"taskSupport":""}}`, "execution.taskSupport must be one of"},
		{`{"name":"x","execution":{"taskSupport":true}}`, "execution.taskSupport must be a string"},
		{`{"name":"x","execution":"async"}`, "execution must be an object"},
	} {
		_, err := ToolTaskSupport(json.RawMessage(tc.in))
		wantCode(t, err, rpc.CodeInvalidParams, tc.frag)
	}
	if s, err := ToolTaskSupport(json.RawMessage(`{"name":"x","execution":null}`)); err != nil || s != TaskSupportForbidden {
		t.Errorf("null execution = %q, %v", s, err)
	}
	for _, tc := range []struct{ in, frag string }{
		{`{}`, "tools is required"},
		{`{"tools":[{"inputSchema":{}}]}`, "tools[0].name is required"},
		{`{"tools":[{"name":"a","execution":{"taskSupport":"x"}}]}`, "tools[0].execution.taskSupport must be one of"},
		{`{"tools":["a"]}`, "tools[0] must be an object"},
	} {
		_, err := ListToolsTaskSupport(json.RawMessage(tc.in))
		wantCode(t, err, rpc.CodeInvalidParams, "tools/list result: ", tc.frag)
	}
	if !TaskSupportOptional.Valid() || TaskSupport("").Valid() || TaskSupport("").Effective() != TaskSupportForbidden {
		t.Error("Valid/Effective wrong")
	}
}

func TestPatchListToolsTaskSupport(t *testing.T) {
	// Advertise every tool as optional except "no", and drop the explicit
	// forbidden on "no".
	patched, err := PatchListToolsTaskSupport(json.RawMessage(toolsList), func(name string, cur TaskSupport) TaskSupport {
		if name == "no" {
			return ""
		}
		return TaskSupportOptional
	})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "ListToolsResult", patched)
	want := `{"tools":[{"name":"quick","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},` +
		`{"name":"long_job","description":"d","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},` +
		`{"name":"must","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional","vendor":1},"_meta":{"k":"v"}},` +
		`{"name":"no","inputSchema":{"type":"object"},"execution":{}}],"nextCursor":"p2","_meta":{"m":1}}`
	if string(patched) != want {
		t.Errorf("patched = %s\nwant      %s", patched, want)
	}
	// An identity patch changes no tool bytes.
	same, err := PatchListToolsTaskSupport(json.RawMessage(`{"tools":[ {"name" : "a", "inputSchema":{"type":"object"}} ]}`), func(_ string, c TaskSupport) TaskSupport { return c })
	if err != nil || string(same) != `{"tools":[{"name" : "a", "inputSchema":{"type":"object"}}]}` {
		t.Errorf("identity = %s, %v", same, err)
	}
	if _, err := PatchListToolsTaskSupport(json.RawMessage(toolsList), func(string, TaskSupport) TaskSupport { return "bogus" }); rpc.CodeOf(err) != rpc.CodeInternalError {
		t.Errorf("bogus taskSupport accepted: %v", err)
	}
	one, err := PatchToolTaskSupport(json.RawMessage(`{"name":"a","inputSchema":{"type":"object"}}`), TaskSupportRequired)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "Tool", one)
	if s, _ := ToolTaskSupport(one); s != TaskSupportRequired {
		t.Errorf("patched tool support = %q", s)
	}
	if same, err := PatchToolTaskSupport(json.RawMessage(`{"name":"a"}`), ""); err != nil || string(same) != `{"name":"a"}` {
		t.Errorf("remove from tool without execution = %s, %v", same, err)
	}
	// An execution that is not an object is replaced (strict encode).
	if fixed, err := PatchToolTaskSupport(json.RawMessage(`{"name":"a","execution":5}`), TaskSupportOptional); err != nil || string(fixed) != `{"name":"a","execution":{"taskSupport":"optional"}}` {
		t.Errorf("non-object execution = %s, %v", fixed, err)
	}
	if fixed, err := PatchToolTaskSupport(json.RawMessage(`{"name":"a","execution":5}`), ""); err != nil || string(fixed) != `{"name":"a"}` {
		t.Errorf("non-object execution removed = %s, %v", fixed, err)
	}
}

// A tools/list from a peer of another era may carry a taskSupport outside the
// three schema values or a non-object execution. Rewriting the list must not
// fail on that one tool, and must never pass the odd value on: lenient
// decode, strict encode (L-10).
func TestPatchListToolsTaskSupportRewritesOddValues(t *testing.T) {
	in := `{"tools":[{"name":"a","inputSchema":{"type":"object"},"execution":{"taskSupport":"sometimes","x":1}},` +
		`{"name":"b","inputSchema":{"type":"object"},"execution":true},{"name":"c","inputSchema":{"type":"object"}}]}`
	var seen []TaskSupport
	out, err := PatchListToolsTaskSupport(json.RawMessage(in), func(_ string, cur TaskSupport) TaskSupport {
		seen = append(seen, cur)
		return TaskSupportOptional
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tools":[{"name":"a","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional","x":1}},` +
		`{"name":"b","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},` +
		`{"name":"c","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}]}`
	if string(out) != want {
		t.Errorf("patched = %s\nwant      %s", out, want)
	}
	check(t, "ListToolsResult", out)
	for i, s := range seen {
		if s != TaskSupportForbidden {
			t.Errorf("tool %d reached fn as %q, want forbidden (unreadable = absent)", i, s)
		}
	}
	// Removing it everywhere (as the modern face does) drops the odd value too.
	out, err = PatchListToolsTaskSupport(json.RawMessage(in), func(string, TaskSupport) TaskSupport { return "" })
	if err != nil || strings.Contains(string(out), "sometimes") || strings.Contains(string(out), "true") {
		t.Errorf("remove = %s, %v", out, err)
	}
}

// TestDecideToolCall walks the tool-level negotiation table (L-05..L-10).
func TestDecideToolCall(t *testing.T) {
	for _, tc := range []struct {
		name       string
		serverDecl bool
		support    TaskSupport
		task       bool
		asTask     bool
		code       int64 // 0 = no error
	}{
		{"L-05 undeclared ignores task", false, TaskSupportRequired, true, false, 0},
		{"undeclared plain", false, TaskSupportOptional, false, false, 0},
		{"L-07 absent with task", true, "", true, false, rpc.CodeMethodNotFound},
		{"L-07 forbidden with task", true, TaskSupportForbidden, true, false, rpc.CodeMethodNotFound},
		{"forbidden plain", true, TaskSupportForbidden, false, false, 0},
		{"L-09 optional with task", true, TaskSupportOptional, true, true, 0},
		{"L-09 optional plain", true, TaskSupportOptional, false, false, 0},
		{"required with task", true, TaskSupportRequired, true, true, 0},
		{"L-08 required plain", true, TaskSupportRequired, false, false, rpc.CodeMethodNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asTask, err := DecideToolCall("long_job", tc.serverDecl, tc.support, tc.task)
			if asTask != tc.asTask {
				t.Errorf("asTask = %v, want %v", asTask, tc.asTask)
			}
			if tc.code == 0 {
				if err != nil {
					t.Errorf("unexpected error %v", err)
				}
				return
			}
			wantCode(t, err, tc.code, `"long_job"`)
		})
	}
}
