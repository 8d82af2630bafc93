package legacy

import (
	"encoding/json"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Meta is a decoded "_meta" object. Values stay raw so keys this package does
// not know are forwarded unchanged.
type Meta map[string]json.RawMessage

// RelatedTaskMetadata is the value of _meta[RelatedTaskKey].
type RelatedTaskMetadata struct {
	TaskID string `json:"taskId"`
}

// RelatedTaskID returns the taskId under RelatedTaskKey, if m holds a
// well-formed one.
func (m Meta) RelatedTaskID() (string, bool) {
	v, ok := m[RelatedTaskKey]
	if !ok {
		return "", false
	}
	id, err := decodeRelatedTask(v, "_meta")
	if err != nil {
		return "", false
	}
	return id, true
}

// SetRelatedTask sets _meta[RelatedTaskKey] = {"taskId": taskID}, allocating
// the map if needed.
func (m *Meta) SetRelatedTask(taskID string) {
	m.set(RelatedTaskKey, mustMarshal(RelatedTaskMetadata{TaskID: taskID}))
}

// ModelImmediateResponse returns the string under ModelImmediateResponseKey.
func (m Meta) ModelImmediateResponse() (string, bool) {
	v, ok := m[ModelImmediateResponseKey]
	if !ok {
		return "", false
	}
	var s string
	if rawjson.Kind(v) != "a string" || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// SetModelImmediateResponse sets the CreateTaskResult hint for the model (L-23).
func (m *Meta) SetModelImmediateResponse(text string) {
	m.set(ModelImmediateResponseKey, mustMarshal(text))
}

func (m *Meta) set(key string, v json.RawMessage) {
	if *m == nil {
		*m = Meta{}
	}
	(*m)[key] = v
}

// validate checks that every value is JSON and the keys this package knows
// have their schema shape.
func (m Meta) validate(what string) error {
	for k, v := range m {
		if !rawjson.Valid(v) {
			return InternalError("%s: _meta[%q] is not valid JSON", what, k)
		}
	}
	if v, ok := m[RelatedTaskKey]; ok {
		if _, err := decodeRelatedTask(v, what+": _meta"); err != nil {
			return InternalError("%s", rpc.As(err).Message)
		}
	}
	if v, ok := m[ModelImmediateResponseKey]; ok && rawjson.Kind(v) != "a string" {
		return InternalError("%s: _meta[%q] must be a string", what, ModelImmediateResponseKey)
	}
	return nil
}

// decodeRelatedTask decodes a RelatedTaskMetadata value.
func decodeRelatedTask(v []byte, what string) (string, error) {
	f, err := openObject(v, what+"["+RelatedTaskKey+"]", rpc.CodeInvalidParams)
	if err != nil {
		return "", err
	}
	id, _, err := f.str("taskId", true)
	return id, err
}

// DecodeRelatedTaskMetadata decodes the value stored under RelatedTaskKey.
func DecodeRelatedTaskMetadata(data []byte) (RelatedTaskMetadata, error) {
	id, err := decodeRelatedTask(data, "related-task metadata")
	if err != nil {
		return RelatedTaskMetadata{}, err
	}
	return RelatedTaskMetadata{TaskID: id}, nil
}

// SetRelatedTask returns obj (request params, notification params or a
// result) with _meta[RelatedTaskKey] = {"taskId": taskID}. Existing _meta keys
// and every other member stay as they were; an existing related-task entry is
// replaced. No bytes or null count as {}. This is how the tasks/result response
// (L-34) and side-channel requests (L-33) get their metadata.
func SetRelatedTask(obj json.RawMessage, taskID string) (json.RawMessage, error) {
	return setMetaKey(obj, RelatedTaskKey, mustMarshal(RelatedTaskMetadata{TaskID: taskID}))
}

// RelatedTaskOf reads obj._meta[RelatedTaskKey].taskId. ok is false when the
// key is absent; a present but malformed entry is a -32602 error.
func RelatedTaskOf(obj json.RawMessage) (taskID string, ok bool, err error) {
	ms, err := objectOrEmpty(obj, "message", rpc.CodeInvalidParams)
	if err != nil {
		return "", false, err
	}
	mv, found := rawjson.Lookup(ms, "_meta")
	if !found || rawjson.IsNull(mv) {
		return "", false, nil
	}
	return RelatedTaskFromMeta(mv)
}

// RelatedTaskFromMeta reads the related-task taskId from a raw _meta object
// itself (not the message holding it). No bytes or null give ok false.
func RelatedTaskFromMeta(meta json.RawMessage) (taskID string, ok bool, err error) {
	ms, err := objectOrEmpty(meta, "_meta", rpc.CodeInvalidParams)
	if err != nil {
		return "", false, err
	}
	rv, found := rawjson.Lookup(ms, RelatedTaskKey)
	if !found {
		return "", false, nil
	}
	id, err := decodeRelatedTask(rv, "_meta")
	if err != nil {
		return "", false, err
	}
	return id, true, nil
}

// setMetaKey sets obj._meta[key] = val, keeping everything else verbatim.
func setMetaKey(obj json.RawMessage, key string, val []byte) (json.RawMessage, error) {
	ms, err := objectOrEmpty(obj, "message", rpc.CodeInvalidParams)
	if err != nil {
		return nil, err
	}
	var meta []member
	if mv, found := rawjson.Lookup(ms, "_meta"); found && !rawjson.IsNull(mv) {
		if meta, err = objectMembers(mv, "_meta", rpc.CodeInvalidParams); err != nil {
			return nil, err
		}
	}
	meta = rawjson.With(meta, key, val)
	return rawjson.Append(nil, rawjson.With(ms, "_meta", rawjson.Append(nil, meta))), nil
}
