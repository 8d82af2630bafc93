package legacy

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Fuzz targets for every decoder. The properties:
//   - no panic;
//   - a failure is an *rpc.Error with code -32700, -32600 or -32602;
//   - a decoded value that passes Validate encodes, and encoding is stable:
//     decode(encode(v)) succeeds and encodes to the same bytes;
//   - a decoded value that fails Validate does not encode (strict encoding),
//     and the encoder's error carries -32603.

var validTask = `{"taskId":"3f2c","status":"working","statusMessage":"step 2/5","createdAt":"2025-11-25T10:30:00.000Z","lastUpdatedAt":"2025-11-25T10:30:04.120Z","ttl":60000,"pollInterval":1000}`

// commonSeeds are malformed inputs every target gets.
var commonSeeds = []string{
	``, ` `, `null`, `{`, `}`, `[]`, `"x"`, `1`, `true`, `{}`, `{"":""}`, "\xff", `{"a":1,"a":2}`,
	`{"taskId":"\ud800"}`, `{"_meta":[]}`, `{"_meta":{"` + RelatedTaskKey + `":{"taskId":1}}}`,
	`{"ttl":-1}`, `{"ttl":1e999}`, `{"ttl":"1"}`, `{"jsonrpc":"2.0"}`, `[{"jsonrpc":"2.0","id":1,"method":"x"}]`,
}

func wantDecodeError(t *testing.T, err error) {
	t.Helper()
	var e *rpc.Error
	if !errors.As(err, &e) {
		t.Fatalf("decode error %v (%T) is not an *rpc.Error", err, err)
	}
	switch e.Code {
	case rpc.CodeParseError, rpc.CodeInvalidRequest, rpc.CodeInvalidParams:
	default:
		t.Fatalf("decode error code %d (%q) not in {-32700,-32600,-32602}", e.Code, e.Message)
	}
}

type validator interface{ Validate() error }

func fuzzDecoder[T any](f *testing.F, seeds []string, decode func([]byte) (T, error)) {
	for _, s := range append(append([]string(nil), commonSeeds...), seeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := decode(data)
		if err != nil {
			wantDecodeError(t, err)
			return
		}
		b, merr := json.Marshal(v)
		var verr error
		if val, ok := any(v).(validator); ok {
			verr = val.Validate()
		}
		if (verr == nil) != (merr == nil) {
			t.Fatalf("Validate = %v but Marshal = %v for %+v", verr, merr, v)
		}
		if merr != nil {
			if rpc.CodeOf(merr) != rpc.CodeInternalError {
				t.Fatalf("encode error %v does not carry -32603", merr)
			}
			return
		}
		v2, err := decode(b)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", b, err)
		}
		b2, err := json.Marshal(v2)
		if err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("encoding not stable:\n%s\n%s (%v)", b, b2, err)
		}
	})
}

func FuzzDecodeTask(f *testing.F) {
	fuzzDecoder(f, []string{validTask,
		`{"taskId":"a","status":"completed","createdAt":"x","lastUpdatedAt":"y","ttl":null}`,
		`{"taskId":"a","status":"submitted","createdAt":"x","lastUpdatedAt":"y","ttl":null}`,
		`{"taskId":"a","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":1.5e3,"pollInterval":0}`,
	}, DecodeTask)
}

func FuzzDecodeTaskMetadata(f *testing.F) {
	fuzzDecoder(f, []string{`{"ttl":60000}`, `{"ttl":0.5}`, `{"ttl":-0}`, `{"ttl":123456789012345678901234567890}`, `{"pollInterval":1}`}, DecodeTaskMetadata)
}

func FuzzDecodeCreateTaskResult(f *testing.F) {
	fuzzDecoder(f, []string{`{"task":` + validTask + `}`,
		`{"task":` + validTask + `,"_meta":{"` + ModelImmediateResponseKey + `":"started"}}`,
		`{"task":` + validTask + `,"_meta":{"` + ModelImmediateResponseKey + `":5}}`,
		`{"task":{}}`, validTask,
	}, DecodeCreateTaskResult)
}

var taskIDSeeds = []string{`{"taskId":"3f2c"}`, `{"taskId":""}`, `{"taskId":7}`, `{"taskId":"a","_meta":{"` + RelatedTaskKey + `":{"taskId":"b"}}}`}

func FuzzDecodeGetTaskParams(f *testing.F) { fuzzDecoder(f, taskIDSeeds, DecodeGetTaskParams) }

func FuzzDecodeGetTaskPayloadParams(f *testing.F) {
	fuzzDecoder(f, taskIDSeeds, DecodeGetTaskPayloadParams)
}

func FuzzDecodeCancelTaskParams(f *testing.F) { fuzzDecoder(f, taskIDSeeds, DecodeCancelTaskParams) }

func FuzzDecodeListTasksParams(f *testing.F) {
	fuzzDecoder(f, []string{`{"cursor":"b2"}`, `{"cursor":""}`, `{"cursor":1}`, `{"_meta":{"progressToken":1}}`}, DecodeListTasksParams)
}

func FuzzDecodeGetTaskResult(f *testing.F) {
	fuzzDecoder(f, []string{validTask, `{"taskId":"a"}`}, DecodeGetTaskResult)
}

func FuzzDecodeCancelTaskResult(f *testing.F) {
	fuzzDecoder(f, []string{validTask, `{"taskId":"a","status":"cancelled","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":null}`}, DecodeCancelTaskResult)
}

func FuzzDecodeListTasksResult(f *testing.F) {
	fuzzDecoder(f, []string{`{"tasks":[]}`, `{"tasks":[` + validTask + `],"nextCursor":"c"}`, `{"tasks":[1]}`, `{"tasks":{}}`}, DecodeListTasksResult)
}

func FuzzDecodeGetTaskPayloadResult(f *testing.F) {
	fuzzDecoder(f, []string{`{"content":[],"_meta":{"` + RelatedTaskKey + `":{"taskId":"a"}}}`, `{"content":[]}`, `{"isError":true}`}, DecodeGetTaskPayloadResult)
}

func FuzzDecodeTaskStatusNotificationParams(f *testing.F) {
	fuzzDecoder(f, []string{validTask}, DecodeTaskStatusNotificationParams)
}

func FuzzDecodeTaskStatusNotification(f *testing.F) {
	fuzzDecoder(f, []string{`{"jsonrpc":"2.0","method":"notifications/tasks/status","params":` + validTask + `}`,
		`{"jsonrpc":"2.0","method":"notifications/tasks/status"}`, `{"jsonrpc":"2.0","id":1,"method":"notifications/tasks/status","params":{}}`}, DecodeTaskStatusNotification)
}

func requestSeeds(method string) []string {
	return []string{
		`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"taskId":"a"}}`,
		`{"jsonrpc":"2.0","id":"x","method":"` + method + `","params":{"taskId":"a","cursor":"c"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"` + method + `"}`,
		`{"jsonrpc":"2.0","id":null,"method":"` + method + `","params":{}}`,
		`{"jsonrpc":"1.0","id":1,"method":"` + method + `","params":{}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"` + method + `","params":[]}`,
	}
}

func FuzzDecodeGetTaskRequest(f *testing.F) {
	fuzzDecoder(f, requestSeeds(MethodTasksGet), DecodeGetTaskRequest)
}

func FuzzDecodeGetTaskPayloadRequest(f *testing.F) {
	fuzzDecoder(f, requestSeeds(MethodTasksResult), DecodeGetTaskPayloadRequest)
}

func FuzzDecodeCancelTaskRequest(f *testing.F) {
	fuzzDecoder(f, requestSeeds(MethodTasksCancel), DecodeCancelTaskRequest)
}

func FuzzDecodeListTasksRequest(f *testing.F) {
	fuzzDecoder(f, requestSeeds(MethodTasksList), DecodeListTasksRequest)
}

func FuzzDecodeRequest(f *testing.F) { fuzzDecoder(f, requestSeeds(MethodToolsCall), DecodeRequest) }

func FuzzDecodeNotification(f *testing.F) {
	fuzzDecoder(f, []string{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, `{"jsonrpc":"2.0","method":""}`}, DecodeNotification)
}

func FuzzDecodeResponse(f *testing.F) {
	fuzzDecoder(f, []string{`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m","data":null}}`,
		`{"jsonrpc":"2.0","error":{"code":1,"message":"m"}}`, `{"jsonrpc":"2.0","id":1,"result":{},"error":{}}`}, DecodeResponse)
}

var capSeeds = []string{`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`, `{"list":true,"cancel":false}`,
	`{"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}},"x":1},"y":[1]}`, `{"requests":[]}`, `{"list":"yes"}`}

func FuzzDecodeServerTasksCapability(f *testing.F) {
	fuzzDecoder(f, capSeeds, DecodeServerTasksCapability)
}

func FuzzDecodeClientTasksCapability(f *testing.F) {
	fuzzDecoder(f, capSeeds, DecodeClientTasksCapability)
}

func FuzzDecodeRelatedTaskMetadata(f *testing.F) {
	fuzzDecoder(f, []string{`{"taskId":"a"}`, `{"taskId":""}`, `{"taskId":null}`}, DecodeRelatedTaskMetadata)
}

// FuzzSplitTaskParam: rest never contains "task"; putting the task back and
// splitting again gives the same metadata.
func FuzzSplitTaskParam(f *testing.F) {
	for _, s := range append(commonSeeds, `{"name":"j","task":{}}`, `{"name":"j","task":{"ttl":5},"arguments":{"task":1}}`,
		`{"task":null}`, `{"task":{"ttl":-1}}`, `{"task":[]}`, `{"name":"a\"}","task":{}}`) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rest, task, present, err := SplitTaskParam(data)
		if err != nil {
			wantDecodeError(t, err)
			return
		}
		if present != (task != nil) {
			t.Fatalf("present=%v task=%v", present, task)
		}
		if rawjson.IsAbsent(rest) {
			return
		}
		ms, err := objectMembers(rest, "rest", rpc.CodeInvalidParams)
		if err != nil {
			t.Fatalf("rest %s is not an object: %v", rest, err)
		}
		if _, found := rawjson.Lookup(ms, "task"); found && present {
			t.Fatalf("rest %s still has task", rest)
		}
		if !present {
			return
		}
		again, err := SetTaskParam(rest, task)
		if err != nil {
			t.Fatalf("SetTaskParam: %v", err)
		}
		_, task2, present2, err := SplitTaskParam(again)
		if err != nil || !present2 || !eqPtr(task.TTL, task2.TTL) {
			t.Fatalf("re-split of %s = %v %v %v", again, task2, present2, err)
		}
	})
}

// FuzzRelatedTask: SetRelatedTask on any object yields JSON whose related
// task reads back.
func FuzzRelatedTask(f *testing.F) {
	for _, s := range append(commonSeeds, `{"content":[],"_meta":{"k":1}}`, `{"_meta":null}`) {
		f.Add([]byte(s), "T1")
	}
	f.Fuzz(func(t *testing.T, data []byte, id string) {
		if _, _, err := RelatedTaskOf(data); err != nil {
			wantDecodeError(t, err)
		}
		out, err := SetRelatedTask(data, id)
		if err != nil {
			wantDecodeError(t, err)
			return
		}
		if !json.Valid(out) {
			t.Fatalf("output %s is not JSON", out)
		}
		// encoding/json turns each invalid UTF-8 byte into U+FFFD.
		var want string
		if err := json.Unmarshal(mustMarshal(id), &want); err != nil {
			t.Fatal(err)
		}
		got, ok, err := RelatedTaskOf(out)
		if err != nil || !ok || got != want {
			t.Fatalf("RelatedTaskOf(%s) = %q %v %v, want %q", out, got, ok, err, want)
		}
	})
}

// FuzzToolsTaskSupport: patching a tools/list result keeps it a valid list in
// which every tool reads back as patched.
func FuzzToolsTaskSupport(f *testing.F) {
	for _, s := range append(commonSeeds, toolsList, `{"tools":[{"name":"a","execution":{"taskSupport":"x"}}]}`, `{"tools":[{"name":1}]}`, `{"tools":[{"name":"a","execution":[]}]}`) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The same bytes as a single Tool.
		if _, err := ToolTaskSupport(data); err != nil {
			wantDecodeError(t, err)
		} else if one, err := PatchToolTaskSupport(data, TaskSupportRequired); err != nil {
			t.Fatalf("PatchToolTaskSupport after a good read: %v", err)
		} else if s, err := ToolTaskSupport(one); err != nil || s != TaskSupportRequired {
			t.Fatalf("patched tool %s reads %q, %v", one, s, err)
		}
		_ = IsCreateTaskResult(data)
		before, err := ListToolsTaskSupport(data)
		if err != nil {
			wantDecodeError(t, err)
		}
		out, perr := PatchListToolsTaskSupport(data, func(string, TaskSupport) TaskSupport { return TaskSupportOptional })
		if err == nil && perr != nil {
			t.Fatalf("ListToolsTaskSupport read it but Patch err=%v", perr)
		}
		if perr != nil {
			wantDecodeError(t, perr)
			return
		}
		// Patch is more lenient than the reader (it rewrites unreadable
		// taskSupport values), and what it writes is always readable.
		after, aerr := ListToolsTaskSupport(out)
		if aerr != nil {
			t.Fatalf("patched result %s unreadable: %v", out, aerr)
		}
		if err == nil && len(after) != len(before) {
			t.Fatalf("tool set changed: %v → %v", before, after)
		}
		for name, s := range after {
			if s != TaskSupportOptional {
				t.Fatalf("%s = %q after patch", name, s)
			}
		}
	})
}

// FuzzCapabilitiesPatch: patching capabilities.tasks into an InitializeResult
// round-trips.
func FuzzCapabilitiesPatch(f *testing.F) {
	for _, s := range append(commonSeeds, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}`,
		`{"capabilities":{"tasks":{"list":{}}}}`, `{"capabilities":null}`, `{"capabilities":{"tasks":7}}`) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := InitializeResultTasks(data); err != nil {
			wantDecodeError(t, err)
		}
		want := &ServerTasksCapability{Cancel: true, ToolsCall: true}
		out, err := PatchInitializeResultTasks(data, want)
		if err != nil {
			wantDecodeError(t, err)
			return
		}
		got, err := InitializeResultTasks(out)
		if err != nil || got == nil || !got.Cancel || !got.ToolsCall || got.List {
			t.Fatalf("InitializeResultTasks(%s) = %+v, %v", out, got, err)
		}
		if _, err := ProtocolVersionOf(out); err != nil {
			wantDecodeError(t, err)
		}
		// The same bytes as initialize params, client side.
		if _, err := InitializeParamsTasks(data); err != nil {
			wantDecodeError(t, err)
		}
		cout, err := PatchInitializeParamsTasks(data, &ClientTasksCapability{ElicitationCreate: true})
		if err != nil {
			t.Fatalf("client patch failed where the server patch worked: %v", err)
		}
		if c, err := InitializeParamsTasks(cout); err != nil || c == nil || !c.ElicitationCreate || c.SamplingCreateMessage {
			t.Fatalf("InitializeParamsTasks(%s) = %+v, %v", cout, c, err)
		}
	})
}
