package rpc

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// A limit refusal carries its own code, outside every range either spec
// reserves (M-45), and tells an HTTP transport its status and Retry-After.
func TestLimitError(t *testing.T) {
	if CodeLimitReached >= -32768 && CodeLimitReached <= -32000 {
		t.Fatalf("CodeLimitReached %d lies in the JSON-RPC reserved block", CodeLimitReached)
	}
	for _, c := range []int64{CodeHeaderMismatch, CodeMissingRequiredClientCapability, CodeUnsupportedProtocolVersion, CodeLegacyResourceNotFound, CodeInternalError} {
		if c == CodeLimitReached {
			t.Fatalf("CodeLimitReached collides with %d", c)
		}
	}
	e := LimitError("tasks", LimitScopePrincipal, 3, 0, "too many (limit %d)", 3)
	if e.Code != CodeLimitReached || e.Message != "too many (limit 3)" {
		t.Errorf("error %+v", e)
	}
	var d LimitData
	if err := json.Unmarshal(e.Data, &d); err != nil || d != (LimitData{Limit: "tasks", Scope: "principal", Max: 3, RetryAfterSeconds: 1}) {
		t.Errorf("data %s (%v)", e.Data, err)
	}
	if st, ra, ok := LimitHTTP(fmt.Errorf("wrapped: %w", e)); !ok || st != http.StatusTooManyRequests || ra != 1 {
		t.Errorf("LimitHTTP(principal) = %d, %d, %v", st, ra, ok)
	}
	p := LimitError("sessions", LimitScopeProcess, 5, 30, "full")
	if st, ra, ok := LimitHTTP(p); !ok || st != http.StatusServiceUnavailable || ra != 30 {
		t.Errorf("LimitHTTP(process) = %d, %d, %v", st, ra, ok)
	}
	if _, _, ok := LimitHTTP(Errorf(CodeInternalError, "x")); ok {
		t.Error("LimitHTTP of another error reported a limit")
	}
}
