package legacy

import (
	"encoding/json"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// TaskSupport is a tool's execution.taskSupport (L-05..L-10).
type TaskSupport string

// The three values of execution.taskSupport; absent means forbidden.
const (
	TaskSupportForbidden TaskSupport = "forbidden"
	TaskSupportOptional  TaskSupport = "optional"
	TaskSupportRequired  TaskSupport = "required"
)

// Valid reports whether s is one of the three schema values (L-10). The empty
// value is not valid; use Effective for "absent".
func (s TaskSupport) Valid() bool {
	return s == TaskSupportForbidden || s == TaskSupportOptional || s == TaskSupportRequired
}

// Effective maps the empty (absent) value to forbidden, the schema default.
func (s TaskSupport) Effective() TaskSupport {
	if s == "" {
		return TaskSupportForbidden
	}
	return s
}

// ToolTaskSupport reads execution.taskSupport from one raw Tool object and
// returns its effective value (absent → forbidden). A present value outside
// the three of the schema is -32602 (L-10).
func ToolTaskSupport(tool json.RawMessage) (TaskSupport, error) {
	f, err := openObject(tool, "Tool", rpc.CodeInvalidParams)
	if err != nil {
		return "", err
	}
	return toolTaskSupport(f)
}

func toolTaskSupport(f fields) (TaskSupport, error) {
	ex, err := f.group("execution")
	if err != nil {
		return "", err
	}
	s, present, err := ex.str("taskSupport", false)
	if err != nil {
		return "", err
	}
	ts := TaskSupport(s)
	if !present {
		ts = TaskSupportForbidden
	}
	if !ts.Valid() {
		return "", ex.errf("taskSupport", "must be one of forbidden, optional, required, got %s", quote(s))
	}
	return ts, nil
}

// PatchToolTaskSupport returns tool with execution.taskSupport set to ts, or
// removed when ts is "" (absent = forbidden). Other members of the tool and of
// execution stay verbatim. An execution that is not an object (no schema
// allows that) is replaced: by {"taskSupport": ts}, or dropped when ts is "".
func PatchToolTaskSupport(tool json.RawMessage, ts TaskSupport) (json.RawMessage, error) {
	if ts != "" && !ts.Valid() {
		return nil, InternalError("execution.taskSupport %q is not one of forbidden, optional, required", ts)
	}
	ms, err := objectMembers(tool, "Tool", rpc.CodeInvalidParams)
	if err != nil {
		return nil, err
	}
	var ex []member
	if v, ok := rawjson.Lookup(ms, "execution"); ok && !rawjson.IsNull(v) {
		if rawjson.Kind(v) != "an object" {
			if ts == "" {
				return rawjson.Append(nil, rawjson.Without(ms, "execution")), nil
			}
		} else if ex, err = objectMembers(v, "Tool", rpc.CodeInvalidParams); err != nil {
			return nil, err
		}
	} else if ts == "" {
		return tool, nil // nothing to remove
	}
	if ts == "" {
		ex = rawjson.Without(ex, "taskSupport")
	} else {
		ex = rawjson.With(ex, "taskSupport", mustMarshal(string(ts)))
	}
	return rawjson.Append(nil, rawjson.With(ms, "execution", rawjson.Append(nil, ex))), nil
}

// toolsOf splits a raw tools/list result into its members and tool values.
func toolsOf(result json.RawMessage) ([]member, fields, []json.RawMessage, error) {
	f, err := openObject(result, "tools/list result", rpc.CodeInvalidParams)
	if err != nil {
		return nil, fields{}, nil, err
	}
	v, ok := f.get("tools")
	if !ok || rawjson.Kind(v) != "an array" {
		return nil, fields{}, nil, f.errf("tools", "is required (an array of Tool), got %s", rawjson.Kind(v))
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(v, &tools); err != nil {
		return nil, fields{}, nil, f.errf("tools", "is not a valid array")
	}
	return f.ms, f, tools, nil
}

// ListToolsTaskSupport maps each tool name of a raw tools/list result to its
// effective taskSupport.
func ListToolsTaskSupport(result json.RawMessage) (map[string]TaskSupport, error) {
	_, f, tools, err := toolsOf(result)
	if err != nil {
		return nil, err
	}
	out := make(map[string]TaskSupport, len(tools))
	for i, raw := range tools {
		tf, err := f.sub("tools["+itoa(i)+"]", raw)
		if err != nil {
			return nil, err
		}
		name, _, err := tf.str("name", true)
		if err != nil {
			return nil, err
		}
		if out[name], err = toolTaskSupport(tf); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// PatchListToolsTaskSupport rewrites execution.taskSupport of every tool in a
// raw tools/list result: fn gets the tool name and its effective taskSupport
// and returns the value to advertise ("" removes the member). Tools whose
// value does not change are copied verbatim, as are nextCursor, _meta and every
// other member. Lenient decode, strict encode: a taskSupport outside the
// schema's three values, or an execution that is not an object (a peer of
// another era, or a broken one), reaches fn as forbidden (as if absent) and
// is always rewritten, so one odd tool neither fails the whole list nor reaches the
// client. A tool without a string name is still -32602.
func PatchListToolsTaskSupport(result json.RawMessage, fn func(name string, current TaskSupport) TaskSupport) (json.RawMessage, error) {
	ms, f, tools, err := toolsOf(result)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(result)+16*len(tools))
	out = append(out, '[')
	for i, raw := range tools {
		tf, err := f.sub("tools["+itoa(i)+"]", raw)
		if err != nil {
			return nil, err
		}
		name, _, err := tf.str("name", true)
		if err != nil {
			return nil, err
		}
		cur, err := toolTaskSupport(tf)
		unreadable := err != nil
		if unreadable {
			cur = ""
		}
		patched := raw
		if want := fn(name, cur.Effective()); unreadable || want.Effective() != cur.Effective() || want == "" && hasTaskSupport(tf) {
			if patched, err = PatchToolTaskSupport(raw, want); err != nil {
				return nil, err
			}
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, patched...)
	}
	out = append(out, ']')
	return rawjson.Append(nil, rawjson.With(ms, "tools", out)), nil
}

func hasTaskSupport(tf fields) bool {
	ex, err := tf.group("execution")
	if err != nil {
		return false
	}
	_, ok := ex.get("taskSupport")
	return ok
}

// DecideToolCall applies the tool-level negotiation rules (L-05..L-10) to
// one tools/call: serverToolsCall is whether the server declared
// tasks.requests.tools.call, support the tool's effective taskSupport, and
// taskPresent whether params.task was present (L-24). It reports whether to
// run the call as a task, or the error to answer:
//
//   - server without tools.call: run normally, ignore task (L-05);
//   - task on a forbidden tool: -32601 (L-07);
//   - no task on a required tool: -32601 (L-08);
//   - optional: either way (L-09).
func DecideToolCall(tool string, serverToolsCall bool, support TaskSupport, taskPresent bool) (asTask bool, err error) {
	if !serverToolsCall {
		return false, nil
	}
	switch support.Effective() {
	case TaskSupportRequired:
		if !taskPresent {
			return false, ToolTaskRequiredError(tool)
		}
		return true, nil
	case TaskSupportOptional:
		return taskPresent, nil
	default:
		if taskPresent {
			return false, ToolTaskForbiddenError(tool)
		}
		return false, nil
	}
}
