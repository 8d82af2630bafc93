package legacyface

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/legacy"
)

// servePOST hands go-sdk only the calls the lean path does not serve; the
// task methods, tools/call and ping must stay lean (servePOST has no branch
// of its own for them any more: their JSON and stream writers were dead).
func TestLeanServesTaskMethodsAndToolsCall(t *testing.T) {
	b := &Bridge{}
	id, _ := jsonrpc.MakeID(float64(1))
	for _, m := range []string{legacy.MethodTasksGet, legacy.MethodTasksList, legacy.MethodTasksCancel, legacy.MethodPing,
		legacy.MethodTasksResult, legacy.MethodToolsCall} {
		if !b.leanFor(nil, &jsonrpc.Request{ID: id, Method: m}) {
			t.Errorf("%s is not served by the lean path", m)
		}
	}
	for _, m := range []string{"prompts/get", "resources/read"} {
		if b.leanFor(nil, &jsonrpc.Request{ID: id, Method: m}) {
			t.Errorf("%s is served by the lean path; servePOST's stream branch for it is dead", m)
		}
	}
}
