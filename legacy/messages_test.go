package legacy

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// TestCreateTaskResultNestedL12 checks the nested shape, the model-immediate
// response hint (L-23) and the round trip.
func TestCreateTaskResultNestedL12(t *testing.T) {
	r := CreateTaskResult{Task: sampleTask()}
	r.Meta.SetModelImmediateResponse("Started long_job; I'll report back when it finishes.")
	b := enc(t, r)
	check(t, "CreateTaskResult", b)
	check(t, "Result", b)
	jsonEq(t, b, []byte(`{"task":{"taskId":"3f2c9e0a6b1d4c7e9a8b5d2f1e0c3a4b","status":"working","statusMessage":"step 2/5",
		"createdAt":"`+ts0+`","lastUpdatedAt":"`+ts1+`","ttl":60000,"pollInterval":1000},
		"_meta":{"io.modelcontextprotocol/model-immediate-response":"Started long_job; I'll report back when it finishes."}}`))
	got, err := DecodeCreateTaskResult(b)
	if err != nil {
		t.Fatal(err)
	}
	if msg, ok := got.Meta.ModelImmediateResponse(); !ok || msg == "" {
		t.Errorf("model immediate response lost: %v", got.Meta)
	}
	if !reflect.DeepEqual(got.Task, r.Task) {
		t.Errorf("task = %+v", got.Task)
	}
	if !IsCreateTaskResult(b) {
		t.Error("IsCreateTaskResult = false for a CreateTaskResult")
	}
	for _, plain := range []string{`{"content":[],"isError":false}`, `{"task":"x"}`, `[]`, `nope`} {
		if IsCreateTaskResult(json.RawMessage(plain)) {
			t.Errorf("IsCreateTaskResult(%s) = true", plain)
		}
	}
	// A flat (modern-looking) task is not a CreateTaskResult.
	_, err = DecodeCreateTaskResult(enc(t, GetTaskResult{Task: sampleTask()}))
	wantCode(t, err, rpc.CodeInvalidParams, "task is required")
	_, err = DecodeCreateTaskResult([]byte(`{"task":{"taskId":"a","status":"working","createdAt":"c","lastUpdatedAt":"u"}}`))
	wantCode(t, err, rpc.CodeInvalidParams, "CreateTaskResult: task.ttl is required")
	_, err = DecodeCreateTaskResult([]byte(`{"task":[]}`))
	wantCode(t, err, rpc.CodeInvalidParams, "task must be an object")
	_, err = DecodeCreateTaskResult([]byte(`{"task":` + string(enc(t, sampleTask())) + `,"_meta":[]}`))
	wantCode(t, err, rpc.CodeInvalidParams, "_meta must be an object")

	bad := r
	bad.Meta = Meta{ModelImmediateResponseKey: json.RawMessage(`42`)}
	if _, err := json.Marshal(bad); rpc.CodeOf(err) != rpc.CodeInternalError {
		t.Errorf("non-string model-immediate-response encoded: %v", err)
	}
	bad.Meta = Meta{"x": json.RawMessage(`{`)}
	if _, err := json.Marshal(bad); err == nil {
		t.Error("invalid raw _meta value encoded")
	}
}

func TestTaskIDParams(t *testing.T) {
	type dec func([]byte) (string, Meta, error)
	decoders := map[string]dec{
		MethodTasksGet: func(b []byte) (string, Meta, error) {
			p, err := DecodeGetTaskParams(b)
			return p.TaskID, p.Meta, err
		},
		MethodTasksResult: func(b []byte) (string, Meta, error) {
			p, err := DecodeGetTaskPayloadParams(b)
			return p.TaskID, p.Meta, err
		},
		MethodTasksCancel: func(b []byte) (string, Meta, error) {
			p, err := DecodeCancelTaskParams(b)
			return p.TaskID, p.Meta, err
		},
	}
	for method, decode := range decoders {
		t.Run(method, func(t *testing.T) {
			// L-37: params.taskId wins over a related-task entry in _meta.
			id, meta, err := decode([]byte(`{"taskId":"T1","_meta":{"` + RelatedTaskKey + `":{"taskId":"OTHER"}},"x":1}`))
			if err != nil || id != "T1" {
				t.Fatalf("got %q, %v", id, err)
			}
			if other, _ := meta.RelatedTaskID(); other != "OTHER" {
				t.Errorf("_meta not kept for forwarding: %v", meta)
			}
			for _, tc := range []struct {
				in   string
				code int64
				frag string
			}{
				{``, rpc.CodeInvalidParams, "params are required"},
				{`null`, rpc.CodeInvalidParams, "params are required"},
				{`{`, rpc.CodeParseError, "not valid JSON"},
				{`"T1"`, rpc.CodeInvalidParams, "must be a JSON object, got a string"},
				{`{}`, rpc.CodeInvalidParams, method + " params: taskId is required"},
				{`{"taskId":null}`, rpc.CodeInvalidParams, "taskId must be a string, got null"},
				{`{"taskId":42}`, rpc.CodeInvalidParams, "taskId must be a string, got a number"},
				{`{"taskId":""}`, rpc.CodeInvalidParams, "taskId must not be empty"},
				{`{"taskId":"a","_meta":"x"}`, rpc.CodeInvalidParams, "_meta must be an object"},
			} {
				_, _, err := decode([]byte(tc.in))
				wantCode(t, err, tc.code, tc.frag)
			}
		})
	}
	for _, v := range []any{GetTaskParams{TaskID: "a"}, GetTaskPayloadParams{TaskID: "a"}, CancelTaskParams{TaskID: "a"}} {
		if b := enc(t, v); string(b) != `{"taskId":"a"}` {
			t.Errorf("%T = %s", v, b)
		}
	}
	for _, v := range []any{GetTaskParams{}, GetTaskPayloadParams{}, CancelTaskParams{}} {
		if _, err := json.Marshal(v); rpc.CodeOf(err) != rpc.CodeInternalError {
			t.Errorf("%T without taskId encoded: %v", v, err)
		}
	}
}

// TestFlatResultsL39L58 covers the flat "Result & Task" results and the status
// notification params.
func TestFlatResultsL39L58(t *testing.T) {
	tk := sampleTask()
	get := enc(t, GetTaskResult{Task: tk})
	check(t, "GetTaskResult", get)
	jsonEq(t, get, enc(t, tk)) // flat: no "task" wrapper
	g, err := DecodeGetTaskResult(get)
	if err != nil || !reflect.DeepEqual(g.Task, tk) {
		t.Errorf("DecodeGetTaskResult = %+v, %v", g, err)
	}

	c := tk
	c.Status, c.StatusMessage = StatusCancelled, "The task was cancelled by request."
	cb := enc(t, CancelTaskResult{Task: c, Meta: Meta{"vendor/x": json.RawMessage(`{"a":1}`)}})
	check(t, "CancelTaskResult", cb)
	cr, err := DecodeCancelTaskResult(cb)
	if err != nil || cr.Task.Status != StatusCancelled || string(cr.Meta["vendor/x"]) != `{"a":1}` {
		t.Errorf("DecodeCancelTaskResult = %+v, %v", cr, err)
	}
	if _, err := json.Marshal(CancelTaskResult{Task: tk}); rpc.CodeOf(err) != rpc.CodeInternalError {
		t.Errorf("CancelTaskResult in status working encoded (L-58): %v", err)
	}
	// Lenient decode accepts a non-cancelled status from a sloppy peer.
	if _, err := DecodeCancelTaskResult(get); err != nil {
		t.Errorf("lenient DecodeCancelTaskResult: %v", err)
	}

	n := TaskStatusNotificationParams{Task: tk}
	nb := enc(t, n)
	check(t, "TaskStatusNotificationParams", nb)
	np, err := DecodeTaskStatusNotificationParams(nb)
	if err != nil || !reflect.DeepEqual(np.Task, tk) {
		t.Errorf("DecodeTaskStatusNotificationParams = %+v, %v", np, err)
	}
	full := enc(t, TaskStatusNotification{Params: n})
	check(t, "TaskStatusNotification", full)
	check(t, "ServerNotification", full)
	jsonEq(t, full, []byte(`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":`+string(nb)+`}`))

	for _, in := range []string{`[]`, `{"taskId":"a"}`} {
		_, err := DecodeGetTaskResult([]byte(in))
		wantCode(t, err, rpc.CodeInvalidParams, "tasks/get result")
	}
}

func TestListTasks(t *testing.T) {
	for _, in := range []string{``, `null`, `{}`, `{"_meta":{"progressToken":1}}`} {
		p, err := DecodeListTasksParams([]byte(in))
		if err != nil || p.Cursor != "" {
			t.Errorf("DecodeListTasksParams(%q) = %+v, %v", in, p, err)
		}
	}
	p, err := DecodeListTasksParams([]byte(`{"cursor":"b2","other":true}`))
	if err != nil || p.Cursor != "b2" {
		t.Errorf("cursor: %+v, %v", p, err)
	}
	_, err = DecodeListTasksParams([]byte(`{"cursor":7}`))
	wantCode(t, err, rpc.CodeInvalidParams, "tasks/list params: cursor must be a string, got a number")
	_, err = DecodeListTasksParams([]byte(`[1]`))
	wantCode(t, err, rpc.CodeInvalidParams, "must be a JSON object")
	check(t, "PaginatedRequestParams", enc(t, ListTasksParams{Cursor: "c"}))
	if b := enc(t, ListTasksParams{}); string(b) != `{}` {
		t.Errorf("first-page params = %s", b)
	}

	empty := enc(t, ListTasksResult{})
	if string(empty) != `{"tasks":[]}` {
		t.Errorf("empty list = %s, want tasks: [] (L-50: no nextCursor on the last page)", empty)
	}
	check(t, "ListTasksResult", empty)
	a, b := sampleTask(), sampleTask()
	a.TaskID, a.Status, a.PollInterval = "a1", StatusCompleted, nil
	b.TaskID, b.TTL = "b2", nil
	r := ListTasksResult{Tasks: []Task{a, b}, NextCursor: "b2"}
	rb := enc(t, r)
	check(t, "ListTasksResult", rb)
	got, err := DecodeListTasksResult(rb)
	if err != nil || !reflect.DeepEqual(got, r) {
		t.Errorf("round trip = %+v, %v", got, err)
	}
	for _, tc := range []struct{ in, frag string }{
		{`{}`, "tasks is required"},
		{`{"tasks":null}`, "tasks is required"},
		{`{"tasks":{}}`, "tasks must be an array, got an object"},
		{`{"tasks":[1]}`, "tasks[0] must be an object, got a number"},
		{`{"tasks":[` + string(enc(t, a)) + `,{"taskId":"z","status":"bogus"}]}`, "tasks[1].status must be one of"},
		{`{"tasks":[],"nextCursor":false}`, "nextCursor must be a string"},
	} {
		_, err := DecodeListTasksResult([]byte(tc.in))
		wantCode(t, err, rpc.CodeInvalidParams, "tasks/list result: ", tc.frag)
	}
	bad := r
	bad.Tasks = []Task{a, {TaskID: "x"}}
	if _, err := json.Marshal(bad); rpc.CodeOf(err) != rpc.CodeInternalError {
		t.Errorf("list with an invalid task encoded: %v", err)
	}
}

// TestGetTaskPayloadResultL34: the underlying result is returned exactly, with
// related-task _meta merged in next to existing _meta keys.
func TestGetTaskPayloadResultL34(t *testing.T) {
	under := `{"content":[{"type":"text","text":"done: 42"}],"isError":false,"structuredContent":{"answer":42},"_meta":{"vendor/trace":"abc","` + RelatedTaskKey + `":{"taskId":"stale"}}}`
	check(t, "CallToolResult", []byte(under))
	r, err := NewGetTaskPayloadResult(json.RawMessage(under), "3f2c")
	if err != nil {
		t.Fatal(err)
	}
	b := enc(t, r)
	check(t, "GetTaskPayloadResult", b)
	check(t, "CallToolResult", b)
	jsonEq(t, b, []byte(`{"content":[{"type":"text","text":"done: 42"}],"isError":false,"structuredContent":{"answer":42},
		"_meta":{"vendor/trace":"abc","`+RelatedTaskKey+`":{"taskId":"3f2c"}}}`))
	if id, ok := r.RelatedTaskID(); !ok || id != "3f2c" {
		t.Errorf("RelatedTaskID = %q, %v", id, ok)
	}
	// Without a _meta it is added; an isError result stays a success payload.
	r2, err := NewGetTaskPayloadResult(json.RawMessage(`{"content":[],"isError":true}`), "T")
	if err != nil || string(r2.Raw) != `{"content":[],"isError":true,"_meta":{"`+RelatedTaskKey+`":{"taskId":"T"}}}` {
		t.Errorf("got %s, %v", r2.Raw, err)
	}
	if _, err := NewGetTaskPayloadResult(nil, "T"); rpc.CodeOf(err) != rpc.CodeInternalError {
		t.Errorf("missing underlying result: %v", err)
	}
	if _, err := NewGetTaskPayloadResult(json.RawMessage(`[1]`), "T"); err == nil {
		t.Error("array result accepted")
	}
	// Strict encode: a payload without related-task meta is refused.
	if _, err := json.Marshal(GetTaskPayloadResult{Raw: json.RawMessage(`{"content":[]}`)}); rpc.CodeOf(err) != rpc.CodeInternalError {
		t.Errorf("payload without related-task meta encoded: %v", err)
	}
	// Lenient decode: related-task meta may be missing, but not malformed.
	d, err := DecodeGetTaskPayloadResult([]byte(`{"content":[], "x" : 1}`))
	if err != nil || string(d.Raw) != `{"content":[], "x" : 1}` {
		t.Errorf("lenient decode = %s, %v", d.Raw, err)
	}
	_, err = DecodeGetTaskPayloadResult([]byte(`{"_meta":{"` + RelatedTaskKey + `":{"taskId":1}}}`))
	wantCode(t, err, rpc.CodeInvalidParams, "taskId must be a string")
	_, err = DecodeGetTaskPayloadResult([]byte(`"x"`))
	wantCode(t, err, rpc.CodeInvalidParams, "must be a JSON object")
}

func TestRelatedTaskMetaL33(t *testing.T) {
	params := json.RawMessage(`{"mode":"form","message":"Delete a.txt?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}}`)
	got, err := SetRelatedTask(params, "T1")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "ElicitRequestFormParams", got)
	id, ok, err := RelatedTaskOf(got)
	if err != nil || !ok || id != "T1" {
		t.Errorf("RelatedTaskOf = %q %v %v", id, ok, err)
	}
	if string(got[:len(params)-1]) != string(params[:len(params)-1]) {
		t.Errorf("other members changed: %s", got)
	}
	check(t, "RelatedTaskMetadata", enc(t, RelatedTaskMetadata{TaskID: "T1"}))
	for _, tc := range []struct {
		in     string
		ok     bool
		code   int64
		errors bool
	}{
		{`{}`, false, 0, false},
		{`null`, false, 0, false},
		{`{"_meta":null}`, false, 0, false},
		{`{"_meta":{"other":1}}`, false, 0, false},
		{`{"_meta":{"` + RelatedTaskKey + `":{"taskId":3}}}`, false, rpc.CodeInvalidParams, true},
		{`{"_meta":{"` + RelatedTaskKey + `":"T1"}}`, false, rpc.CodeInvalidParams, true},
		{`{"_meta":7}`, false, rpc.CodeInvalidParams, true},
		{`{"_meta":`, false, rpc.CodeParseError, true},
	} {
		_, ok, err := RelatedTaskOf(json.RawMessage(tc.in))
		if ok != tc.ok || (err != nil) != tc.errors {
			t.Errorf("RelatedTaskOf(%s) ok=%v err=%v", tc.in, ok, err)
		}
		if tc.errors {
			wantCode(t, err, tc.code)
		}
	}
	if got, err := SetRelatedTask(nil, "T"); err != nil || string(got) != `{"_meta":{"`+RelatedTaskKey+`":{"taskId":"T"}}}` {
		t.Errorf("SetRelatedTask(nil) = %s, %v", got, err)
	}
	_, err = SetRelatedTask(json.RawMessage(`{"_meta":[]}`), "T")
	wantCode(t, err, rpc.CodeInvalidParams, "_meta must be a JSON object")
	if id, ok, err := RelatedTaskFromMeta(json.RawMessage(`{"a":1,"` + RelatedTaskKey + `":{"taskId":"M"}}`)); err != nil || !ok || id != "M" {
		t.Errorf("RelatedTaskFromMeta = %q %v %v", id, ok, err)
	}
	if _, ok, err := RelatedTaskFromMeta(nil); ok || err != nil {
		t.Errorf("RelatedTaskFromMeta(nil) = %v %v", ok, err)
	}
	_, _, err = RelatedTaskFromMeta(json.RawMessage(`"x"`))
	wantCode(t, err, rpc.CodeInvalidParams, "_meta must be a JSON object")
	var m Meta
	m.SetRelatedTask("Z")
	if id, ok := m.RelatedTaskID(); !ok || id != "Z" {
		t.Errorf("Meta.SetRelatedTask: %v", m)
	}
	if _, ok := (Meta{RelatedTaskKey: json.RawMessage(`{}`)}).RelatedTaskID(); ok {
		t.Error("malformed related-task entry reported")
	}
	if _, err := DecodeRelatedTaskMetadata([]byte(`{}`)); rpc.CodeOf(err) != rpc.CodeInvalidParams {
		t.Errorf("DecodeRelatedTaskMetadata({}) = %v", err)
	}
}
