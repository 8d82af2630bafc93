package legacy

import (
	"testing"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// One read of a tools/call answer says whether it created a task and what
// task: the same verdicts as IsCreateTaskResult and DecodeCreateTaskResult.
func TestParseCreated(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		isTask   bool
		errCode  int64
		taskID   string
	}{
		{name: "created", in: `{"task":{"taskId":"t1","status":"working","createdAt":"2025-11-25T10:00:00Z","lastUpdatedAt":"2025-11-25T10:00:00Z","ttl":60000}}`, isTask: true, taskID: "t1"},
		{name: "plain result", in: `{"content":[]}`},
		{name: "task not an object", in: `{"task":"t1","content":[]}`},
		{name: "not JSON", in: `{"task":`},
		{name: "not an object", in: `[1]`},
		{name: "task object that does not decode", in: `{"task":{"status":"working"}}`, isTask: true, errCode: rpc.CodeInvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ct, isTask, err := ParseCreated([]byte(tc.in))
			if isTask != tc.isTask || isTask != IsCreateTaskResult([]byte(tc.in)) {
				t.Fatalf("isTask %v, want %v (and as IsCreateTaskResult)", isTask, tc.isTask)
			}
			if rpc.CodeOf(err) != tc.errCode && !(err == nil && tc.errCode == 0) {
				t.Fatalf("err %v, want code %d", err, tc.errCode)
			}
			if ct.Task.TaskID != tc.taskID {
				t.Errorf("task id %q, want %q", ct.Task.TaskID, tc.taskID)
			}
			if tc.isTask {
				want, werr := DecodeCreateTaskResult([]byte(tc.in))
				if (werr == nil) != (err == nil) || want.Task.TaskID != ct.Task.TaskID {
					t.Errorf("differs from DecodeCreateTaskResult: %v / %v", werr, err)
				}
			}
		})
	}
}
