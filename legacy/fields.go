package legacy

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// fields is a decoded JSON object with the context needed for precise error
// messages: what is being decoded ("tasks/get params") and the path of the
// object inside it ("" or "tasks[2].").
type fields struct {
	what string
	path string
	ms   []member
}

// openObject parses data as the object named what. Not JSON → -32700; any
// other JSON → notObjectCode.
func openObject(data []byte, what string, notObjectCode int64) (fields, error) {
	ms, err := objectMembers(data, what, notObjectCode)
	if err != nil {
		return fields{}, err
	}
	return fields{what: what, ms: ms}, nil
}

// sub opens the member value v as a nested object at path key.
func (f fields) sub(key string, v []byte) (fields, error) {
	ms, err := objectMembers(v, f.what, rpc.CodeInvalidParams)
	if err != nil {
		if rpc.CodeOf(err) == rpc.CodeInvalidParams {
			return fields{}, f.errf(key, "must be an object, got %s", rawjson.Kind(v))
		}
		return fields{}, err
	}
	return fields{what: f.what, path: f.path + key + ".", ms: ms}, nil
}

func (f fields) get(key string) ([]byte, bool) { return rawjson.Lookup(f.ms, key) }

// errf is a -32602 error naming the field: `tasks/get params: taskId must be a string`.
func (f fields) errf(key, format string, a ...any) *rpc.Error {
	args := append([]any{f.what, f.path + key}, a...)
	return rpc.Errorf(rpc.CodeInvalidParams, "%s: %s "+format, args...)
}

// str reads a string member. A missing (or null) required member is an error;
// a missing optional one returns "", false.
func (f fields) str(key string, required bool) (string, bool, error) {
	v, ok := f.get(key)
	if !ok || (rawjson.IsNull(v) && !required) {
		if required {
			return "", false, f.errf(key, "is required (a string)")
		}
		return "", false, nil
	}
	if rawjson.Kind(v) != "a string" {
		return "", false, f.errf(key, "must be a string, got %s", rawjson.Kind(v))
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false, f.errf(key, "is not a valid string")
	}
	return s, true, nil
}

// taskID reads a required, non-empty taskId (L-37: params.taskId is the only
// source of truth).
func (f fields) taskID() (string, error) {
	id, _, err := f.str("taskId", true)
	if err != nil {
		return "", err
	}
	if id == "" {
		return "", f.errf("taskId", "must not be empty")
	}
	return id, nil
}

// millis reads an optional millisecond count: any JSON number, truncated to an
// integer and clamped to math.MaxInt64; negative values and non-numbers are
// -32602. A missing member or null returns nil.
func (f fields) millis(key string) (*int64, error) {
	v, ok := f.get(key)
	if !ok || rawjson.IsNull(v) {
		return nil, nil
	}
	n, err := parseMillis(v)
	if err != "" {
		return nil, f.errf(key, "%s, got %s", err, clip(v))
	}
	return &n, nil
}

// parseMillis converts a raw JSON number to a non-negative int64. Unusual
// values (negative, fractional, huge) are clamped rather than rejected:
// receivers MAY override ttl (L-20)
// and the spec defines no error for them. Only a non-number is an error.
func parseMillis(v []byte) (int64, string) {
	const want = "must be a number of milliseconds"
	if rawjson.Kind(v) != "a number" {
		return 0, want
	}
	s := string(bytes.TrimSpace(v))
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, ""
		}
		return n, ""
	}
	x, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !math.IsInf(x, 0):
		return 0, want
	case x < 0 || math.IsInf(x, -1):
		return 0, ""
	case x >= math.MaxInt64: // also +Inf from an overflowing literal
		return math.MaxInt64, ""
	}
	return int64(x), ""
}

// clip renders a raw value for an error message, bounded in length.
func clip(v []byte) string {
	v = bytes.TrimSpace(v)
	if len(v) > 40 {
		return string(v[:40]) + "…"
	}
	return string(v)
}

// meta reads the optional _meta object (null counts as absent).
func (f fields) meta() (Meta, error) {
	v, ok := f.get("_meta")
	if !ok || rawjson.IsNull(v) {
		return nil, nil
	}
	sub, err := f.sub("_meta", v)
	if err != nil {
		return nil, err
	}
	m := make(Meta, len(sub.ms))
	for _, mem := range sub.ms {
		m[mem.Key] = json.RawMessage(bytes.Clone(mem.Val))
	}
	return m, nil
}
