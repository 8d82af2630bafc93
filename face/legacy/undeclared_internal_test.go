package legacyface

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// undeclaredInput: deliverable requests pass; an undeclared one fails the
// task with a -32021 naming exactly the capability, and a request no client
// can declare for with a -32603 (L-82).
func TestUndeclaredInputDecision(t *testing.T) {
	form := modern.InputRequest{Method: modern.MethodElicitationCreate, Params: json.RawMessage(`{"message":"Name?","requestedSchema":{"type":"object","properties":{}}}`)}
	sampling := modern.InputRequest{Method: modern.MethodSamplingCreateMessage, Params: json.RawMessage(`{"messages":[],"maxTokens":5}`)}
	odd := modern.InputRequest{Method: modern.MethodElicitationCreate, Params: json.RawMessage(`{"mode":"telepathy","message":"?"}`)}
	var caps modern.ClientCapabilities
	caps.Sampling = &modern.Object{}
	if _, _, bad := undeclaredInput("t", modern.InputRequests{"s": sampling}, caps); bad {
		t.Error("a declared sampling request was judged undeliverable")
	}
	e, msg, bad := undeclaredInput("ask", modern.InputRequests{"s": sampling, "q": form}, caps)
	if !bad || e.Code != rpc.CodeMissingRequiredClientCapability || !strings.Contains(string(e.Data), `{"elicitation":{"form":{}}}`) ||
		!strings.Contains(e.Message, "tools/call ask") || !strings.Contains(msg, "elicitation.form") {
		t.Errorf("undeclared form elicitation: %v %q %v", e, msg, bad)
	}
	e, _, bad = undeclaredInput("ask", modern.InputRequests{"x": odd}, caps)
	if !bad || e.Code != rpc.CodeInternalError || !strings.Contains(e.Message, "telepathy") {
		t.Errorf("unknown mode: %v %v", e, bad)
	}
}
