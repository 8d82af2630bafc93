package legacy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tasksbridge/tasksbridge/rpc"
)

func TestErrorVocabulary(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   *rpc.Error
		code  int64
		frags []string
	}{
		{"L-38 not found", TaskNotFoundError("T1"), rpc.CodeInvalidParams, []string{"Task not found", `"T1"`}},
		{"L-65 expired", TaskExpiredError("T1"), rpc.CodeInvalidParams, []string{"Task has expired", `"T1"`, "ttl"}},
		{"L-51 cursor", InvalidCursorError("zz"), rpc.CodeInvalidParams, []string{"Invalid cursor", `"zz"`, "without a cursor"}},
		{"L-55 terminal cancel", CancelTerminalError("T1", StatusCompleted), rpc.CodeInvalidParams, []string{"Cannot cancel task: already in terminal status 'completed'", "tasks/result"}},
		{"L-55 L-41 cancel of a cancelled task", CancelTerminalError("T1", StatusCancelled), rpc.CodeInvalidParams, []string{"Cannot cancel task: already in terminal status 'cancelled'", "has no result", "tasks/result answers that it was cancelled"}},
		{"L-07 forbidden", ToolTaskForbiddenError("quick"), rpc.CodeMethodNotFound, []string{`Tool "quick" does not support task-augmented execution`}},
		{"L-08 required", ToolTaskRequiredError("must"), rpc.CodeMethodNotFound, []string{`Tool "must" requires task augmentation (taskSupport: 'required')`, `"task": {}`}},
		{"L-06 request type", TaskAugmentationRequiredError(MethodToolsCall), rpc.CodeInvalidRequest, []string{"Task augmentation required for tools/call requests"}},
		{"not declared", MethodNotSupportedError(MethodTasksList), rpc.CodeMethodNotFound, []string{`"tasks/list"`, "capabilities.tasks"}},
		{"cancelled result", TaskCancelledError("T1"), rpc.CodeInternalError, []string{"Task was cancelled"}},
		{"L-66 internal", InternalError("store: %s", "down"), rpc.CodeInternalError, []string{"store: down"}},
		{"resource", ResourceNotFoundError("file:///a"), rpc.CodeLegacyResourceNotFound, []string{"Resource not found", "file:///a"}},
		{"params", InvalidParamsError("x %d", 1), rpc.CodeInvalidParams, []string{"x 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantCode(t, tc.err, tc.code, tc.frags...)
			b := enc(t, Response{ID: IntID(1), Error: tc.err})
			check(t, "JSONRPCErrorResponse", b)
			if strings.Contains(tc.err.Message, "\n") {
				t.Errorf("message spans lines: %q", tc.err.Message)
			}
		})
	}
	var data map[string]string
	if err := json.Unmarshal(CancelTerminalError("T1", StatusFailed).Data, &data); err != nil || data["status"] != "failed" || data["taskId"] != "T1" {
		t.Errorf("cancel data = %v, %v", data, err)
	}
	if !strings.Contains(string(ResourceNotFoundError("file:///a").Data), `"uri":"file:///a"`) {
		t.Error("resource-not-found data lacks uri")
	}
}

// TestNotFoundDoesNotLeakL69: the answer for a foreign task is built from the
// id alone, so it is identical to the answer for an unknown id.
func TestNotFoundDoesNotLeakL69(t *testing.T) {
	unknown, foreign := TaskNotFoundError("abc"), TaskNotFoundError("abc")
	if !reflect.DeepEqual(unknown, foreign) {
		t.Errorf("%v != %v", unknown, foreign)
	}
	for _, leak := range []string{"another", "owner", "forbidden", "permission", "exists"} {
		if strings.Contains(strings.ToLower(unknown.Message), leak) {
			t.Errorf("message %q hints at existence (%q)", unknown.Message, leak)
		}
	}
	if unknown.Data != nil {
		t.Errorf("not-found carries data %s", unknown.Data)
	}
}

func TestErrorsBoundEchoedInput(t *testing.T) {
	long := strings.Repeat("é", 1000)
	e := TaskNotFoundError(long)
	if len(e.Message) > 400 || !utf8.ValidString(e.Message) || !strings.Contains(e.Message, "…") {
		t.Errorf("long id echoed unbounded or broken: %d bytes, valid=%v", len(e.Message), utf8.ValidString(e.Message))
	}
	if e := InvalidCursorError("a\"b\n"); !strings.Contains(e.Message, `"a\"b\n"`) {
		t.Errorf("cursor not quoted: %q", e.Message)
	}
}
