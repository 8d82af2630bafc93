package notfoundtest

import "testing"

const codeMethodNotFound = -32601

func TestRemovedMethods(t *testing.T) {
	c := &Client{}
	for _, m := range []string{"tasks/list", "tasks/result"} {
		resp := c.Call(m, nil)
		if resp.Error == nil || resp.Error.Code != codeMethodNotFound {
			t.Fatalf("%s: want METHOD_NOT_FOUND", m)
		}
	}
	if resp := c.Call("tasks/list", map[string]any{}); resp.Error == nil || resp.Error.Code != -32601 {
		t.Fatal("tasks/list must be rejected on 2026-07-28")
	}
}
