package legacy

import (
	"encoding/json"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// TaskMetadata is the "task" member of a task-augmented request's params (a
// real params member, not _meta). Its presence is the opt-in (L-24); "task":
// {} without ttl is what TS clients send by default.
type TaskMetadata struct {
	// TTL is the requested retention in ms; nil lets the receiver choose.
	// Decoding accepts any non-negative JSON number, truncated to an integer
	// and clamped to math.MaxInt64; the receiver may override it (L-20).
	TTL *int64 `json:"ttl,omitempty"`
}

// Validate checks that a requested ttl is not negative.
func (m TaskMetadata) Validate() error {
	if m.TTL != nil && *m.TTL < 0 {
		return InternalError("task: ttl must not be negative")
	}
	return nil
}

// MarshalJSON validates m and encodes it ({} when TTL is nil).
func (m TaskMetadata) MarshalJSON() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	type plain TaskMetadata
	return json.Marshal(plain(m))
}

// UnmarshalJSON decodes like DecodeTaskMetadata.
func (m *TaskMetadata) UnmarshalJSON(data []byte) error {
	v, err := DecodeTaskMetadata(data)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// DecodeTaskMetadata decodes the value of params.task. Unknown members (the
// TS SDK's internal pollInterval, say) are ignored. A ttl that is not a
// non-negative number is -32602.
func DecodeTaskMetadata(data []byte) (TaskMetadata, error) {
	f, err := openObject(data, "params.task", rpc.CodeInvalidParams)
	if err != nil {
		if rpc.CodeOf(err) == rpc.CodeInvalidParams {
			return TaskMetadata{}, InvalidParamsError("params: task must be an object (TaskMetadata, e.g. {} or {\"ttl\": 60000}), got %s", rawjson.Kind(data))
		}
		return TaskMetadata{}, err
	}
	f.what, f.path = "params", "task."
	ttl, err := f.millis("ttl")
	if err != nil {
		return TaskMetadata{}, err
	}
	return TaskMetadata{TTL: ttl}, nil
}

// SplitTaskParam separates the task opt-in from the params of a
// task-augmentable request (tools/call, elicitation/create,
// sampling/createMessage). It returns the params without any "task" member,
// the decoded TaskMetadata and whether the request opted in.
//
// Presence decides (L-24): "task": {} opts in, "task": null and a missing key
// do not. When there is no "task" member, rest is params itself, unchanged;
// otherwise every other member is copied byte for byte. No bytes or null
// params give (params, nil, false, nil). Params that are not an object, or a
// task that is not an object or has a bad ttl, are -32602; bytes that are not
// JSON are -32700.
func SplitTaskParam(params json.RawMessage) (rest json.RawMessage, task *TaskMetadata, present bool, err error) {
	if rawjson.IsAbsent(params) {
		return params, nil, false, nil
	}
	ms, err := objectMembers(params, "params", rpc.CodeInvalidParams)
	if err != nil {
		return nil, nil, false, err
	}
	v, found := rawjson.Lookup(ms, "task")
	if !found {
		return params, nil, false, nil
	}
	rest = rawjson.Append(nil, rawjson.Without(ms, "task"))
	if rawjson.IsNull(v) {
		return rest, nil, false, nil
	}
	m, err := DecodeTaskMetadata(v)
	if err != nil {
		return nil, nil, false, err
	}
	return rest, &m, true, nil
}

// SetTaskParam returns params with "task" set to task (or removed when task
// is nil), keeping every other member verbatim. A bridge uses it to
// task-augment a request towards a legacy receiver.
func SetTaskParam(params json.RawMessage, task *TaskMetadata) (json.RawMessage, error) {
	ms, err := objectOrEmpty(params, "params", rpc.CodeInvalidParams)
	if err != nil {
		return nil, err
	}
	if task == nil {
		return rawjson.Append(nil, rawjson.Without(ms, "task")), nil
	}
	b, err := json.Marshal(task)
	if err != nil {
		return nil, rpc.As(err)
	}
	return rawjson.Append(nil, rawjson.With(ms, "task", b)), nil
}
