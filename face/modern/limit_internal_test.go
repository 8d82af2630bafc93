package modernface

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// A limit refusal answered by the modern face carries the bridge's limit
// code with its HTTP status and Retry-After, like the legacy face's
// (docs/CONFORMANCE.md, limit refusals); before, it went out as HTTP 200.
func TestLimitRefusalStatus(t *testing.T) {
	for _, tc := range []struct {
		scope string
		want  int
	}{{rpc.LimitScopePrincipal, http.StatusTooManyRequests}, {rpc.LimitScopeProcess, http.StatusServiceUnavailable}} {
		w := httptest.NewRecorder()
		id, _ := jsonrpc.MakeID(float64(3))
		(&leanOut{w: w}).answer(id, nil, rpc.LimitError("max-x", tc.scope, 2, 7, "too many"))
		if w.Code != tc.want || w.Header().Get("Retry-After") != "7" {
			t.Errorf("%s limit: HTTP %d, Retry-After %q; want %d and 7", tc.scope, w.Code, w.Header().Get("Retry-After"), tc.want)
		}
	}
}
