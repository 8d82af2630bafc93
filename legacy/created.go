package legacy

import (
	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// ParseCreated reads an upstream's answer to a tools/call once: isTask
// reports whether it is a CreateTaskResult (it has an object "task", L-12)
// rather than the plain result of a call the upstream ran synchronously
// (L-05), and, when it is, ct is it decoded, or err says why it does not
// decode as one (-32602, as DecodeCreateTaskResult).
func ParseCreated(result []byte) (ct CreateTaskResult, isTask bool, err error) {
	f, err := openObject(result, "CreateTaskResult", rpc.CodeInvalidParams)
	if err != nil {
		return CreateTaskResult{}, false, nil
	}
	v, ok := f.get("task")
	if !ok || rawjson.Kind(v) != "an object" {
		return CreateTaskResult{}, false, nil
	}
	ct, err = createdFrom(f, v)
	return ct, true, err
}

// createdFrom decodes a CreateTaskResult from its members f, whose "task"
// member is v.
func createdFrom(f fields, v []byte) (CreateTaskResult, error) {
	tf, err := f.sub("task", v)
	if err != nil {
		return CreateTaskResult{}, err
	}
	t, err := decodeTaskFields(tf)
	if err != nil {
		return CreateTaskResult{}, err
	}
	meta, err := f.meta()
	if err != nil {
		return CreateTaskResult{}, err
	}
	return CreateTaskResult{Task: t, Meta: meta}, nil
}
