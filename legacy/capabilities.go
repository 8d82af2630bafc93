package legacy

import (
	"encoding/json"
	"sort"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Capabilities (L-01..L-04, L-11). Every leaf is an object whose presence
// means "supported" (the prose says boolean, the schema says object): decoding
// accepts any object or true as present, and false or null as absent;
// encoding always emits {} (L-03). Unknown members of "tasks" and of
// "tasks.requests" are kept in Extra / RequestsExtra and written back, so a
// proxy does not drop what it does not understand. The raw helpers below edit
// the "tasks" member of a capabilities object without touching anything else.

// ServerTasksCapability is capabilities.tasks of a server (InitializeResult).
type ServerTasksCapability struct {
	List      bool // tasks.list: tasks/list is served (L-03; L-04: not without requestor identity)
	Cancel    bool // tasks.cancel: tasks/cancel is served (L-03)
	ToolsCall bool // tasks.requests.tools.call: task-augmented tools/call is accepted (L-02)

	Extra         map[string]json.RawMessage // unknown members of tasks
	RequestsExtra map[string]json.RawMessage // unknown members of tasks.requests
}

// ClientTasksCapability is capabilities.tasks of a client (InitializeRequest).
// It describes only what the client can receive; a bridge must not require it
// before accepting a task-augmented tools/call (L-11).
type ClientTasksCapability struct {
	List                  bool // the server may call tasks/list on the client
	Cancel                bool // the server may call tasks/cancel on the client
	SamplingCreateMessage bool // tasks.requests.sampling.createMessage
	ElicitationCreate     bool // tasks.requests.elicitation.create

	Extra         map[string]json.RawMessage // unknown members of tasks
	RequestsExtra map[string]json.RawMessage // unknown members of tasks.requests
}

var leaf = json.RawMessage(`{}`)

// capObject builds an object from known leaves plus extras; known keys win.
func capObject(known map[string]json.RawMessage, extra map[string]json.RawMessage) json.RawMessage {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if _, dup := known[k]; !dup {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var ms []member
	for _, k := range []string{"list", "cancel", "requests", "tools", "sampling", "elicitation", "call", "createMessage", "create"} {
		if v, ok := known[k]; ok {
			ms = append(ms, member{Key: k, RawKey: rawjson.Key(k), Val: v})
		}
	}
	for _, k := range keys {
		ms = append(ms, member{Key: k, RawKey: rawjson.Key(k), Val: extra[k]})
	}
	return rawjson.Append(nil, ms)
}

func validateExtra(what string, m map[string]json.RawMessage) error {
	for k, v := range m {
		if !rawjson.Valid(v) {
			return InternalError("%s: member %q is not valid JSON", what, k)
		}
	}
	return nil
}

// tasksCap is what both sides' capabilities.tasks hold: list, cancel,
// the tasks.requests leaves of the side (reqs, in the order of its
// reqLeaves) and the unknown members kept. Each side's type converts to it
// and back; the encoding and decoding are written once, here.
type tasksCap struct {
	list, cancel     bool
	reqs             []bool
	extra, reqsExtra map[string]json.RawMessage
}

// reqLeaf names the leaf tasks.requests.<group>.<leaf>.
type reqLeaf struct{ group, leaf string }

var (
	serverReqLeaves = []reqLeaf{{"tools", "call"}}
	clientReqLeaves = []reqLeaf{{"sampling", "createMessage"}, {"elicitation", "create"}}
)

func (t tasksCap) validate() error {
	if err := validateExtra("capabilities.tasks", t.extra); err != nil {
		return err
	}
	return validateExtra("capabilities.tasks.requests", t.reqsExtra)
}

func (t tasksCap) encode(leaves []reqLeaf) ([]byte, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	known := map[string]json.RawMessage{}
	if t.list {
		known["list"] = leaf
	}
	if t.cancel {
		known["cancel"] = leaf
	}
	reqKnown := map[string]json.RawMessage{}
	for i, l := range leaves {
		if t.reqs[i] {
			reqKnown[l.group] = capObject(map[string]json.RawMessage{l.leaf: leaf}, nil)
		}
	}
	if len(reqKnown) > 0 || len(t.reqsExtra) > 0 {
		known["requests"] = capObject(reqKnown, t.reqsExtra)
	}
	return capObject(known, t.extra), nil
}

func decodeTasksCap(data []byte, leaves []reqLeaf) (tasksCap, error) {
	f, err := openObject(data, "capabilities.tasks", rpc.CodeInvalidParams)
	if err != nil {
		return tasksCap{}, err
	}
	t := tasksCap{reqs: make([]bool, len(leaves))}
	if t.list, err = f.flag("list"); err != nil {
		return tasksCap{}, err
	}
	if t.cancel, err = f.flag("cancel"); err != nil {
		return tasksCap{}, err
	}
	req, err := f.group("requests")
	if err != nil {
		return tasksCap{}, err
	}
	groups := make([]string, len(leaves))
	for i, l := range leaves {
		g, err := req.group(l.group)
		if err != nil {
			return tasksCap{}, err
		}
		if t.reqs[i], err = g.flag(l.leaf); err != nil {
			return tasksCap{}, err
		}
		groups[i] = l.group
	}
	t.extra = f.extra("list", "cancel", "requests")
	t.reqsExtra = req.extra(groups...)
	return t, nil
}

func (c ServerTasksCapability) tasksCap() tasksCap {
	return tasksCap{list: c.List, cancel: c.Cancel, reqs: []bool{c.ToolsCall}, extra: c.Extra, reqsExtra: c.RequestsExtra}
}

func (c ClientTasksCapability) tasksCap() tasksCap {
	return tasksCap{list: c.List, cancel: c.Cancel, reqs: []bool{c.SamplingCreateMessage, c.ElicitationCreate},
		extra: c.Extra, reqsExtra: c.RequestsExtra}
}

// Validate checks that the extra members are JSON.
func (c ServerTasksCapability) Validate() error { return c.tasksCap().validate() }

// MarshalJSON encodes e.g. {"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}.
func (c ServerTasksCapability) MarshalJSON() ([]byte, error) {
	return c.tasksCap().encode(serverReqLeaves)
}

// UnmarshalJSON decodes like DecodeServerTasksCapability.
func (c *ServerTasksCapability) UnmarshalJSON(data []byte) error {
	return assign(c, data, DecodeServerTasksCapability)
}

// Validate checks that the extra members are JSON.
func (c ClientTasksCapability) Validate() error { return c.tasksCap().validate() }

// MarshalJSON encodes e.g. {"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}}}}.
func (c ClientTasksCapability) MarshalJSON() ([]byte, error) {
	return c.tasksCap().encode(clientReqLeaves)
}

// UnmarshalJSON decodes like DecodeClientTasksCapability.
func (c *ClientTasksCapability) UnmarshalJSON(data []byte) error {
	return assign(c, data, DecodeClientTasksCapability)
}

// flag reads a capability leaf: an object or true is present; false, null or
// a missing key is absent; anything else is -32602.
func (f fields) flag(key string) (bool, error) {
	v, ok := f.get(key)
	if !ok {
		return false, nil
	}
	switch k := rawjson.Kind(v); {
	case k == "an object":
		return true, nil
	case k == "null":
		return false, nil
	case k == "a boolean":
		return v[0] == 't', nil
	default:
		return false, f.errf(key, "must be an object ({} = supported), got %s", k)
	}
}

// group opens an optional nested object (requests, requests.tools, ...).
// Missing or null gives an empty group.
func (f fields) group(key string) (fields, error) {
	v, ok := f.get(key)
	if !ok || rawjson.IsNull(v) {
		return fields{what: f.what, path: f.path + key + "."}, nil
	}
	return f.sub(key, v)
}

func (f fields) extra(known ...string) map[string]json.RawMessage {
	var out map[string]json.RawMessage
outer:
	for _, m := range f.ms {
		for _, k := range known {
			if m.Key == k {
				continue outer
			}
		}
		if out == nil {
			out = map[string]json.RawMessage{}
		}
		out[m.Key] = json.RawMessage(append([]byte(nil), m.Val...))
	}
	return out
}

// DecodeServerTasksCapability decodes the value of a server's
// capabilities.tasks.
func DecodeServerTasksCapability(data []byte) (ServerTasksCapability, error) {
	t, err := decodeTasksCap(data, serverReqLeaves)
	if err != nil {
		return ServerTasksCapability{}, err
	}
	return ServerTasksCapability{List: t.list, Cancel: t.cancel, ToolsCall: t.reqs[0],
		Extra: t.extra, RequestsExtra: t.reqsExtra}, nil
}

// DecodeClientTasksCapability decodes the value of a client's
// capabilities.tasks.
func DecodeClientTasksCapability(data []byte) (ClientTasksCapability, error) {
	t, err := decodeTasksCap(data, clientReqLeaves)
	if err != nil {
		return ClientTasksCapability{}, err
	}
	return ClientTasksCapability{List: t.list, Cancel: t.cancel, SamplingCreateMessage: t.reqs[0], ElicitationCreate: t.reqs[1],
		Extra: t.extra, RequestsExtra: t.reqsExtra}, nil
}

// ---- raw helpers --------------------------------------------------------------

// tasksMember returns the raw "tasks" member of a capabilities object.
func tasksMember(caps json.RawMessage) ([]byte, bool, error) {
	ms, err := objectOrEmpty(caps, "capabilities", rpc.CodeInvalidParams)
	if err != nil {
		return nil, false, err
	}
	v, ok := rawjson.Lookup(ms, "tasks")
	if !ok || rawjson.IsNull(v) {
		return nil, false, nil
	}
	return v, true, nil
}

// ServerTasksFrom reads capabilities.tasks from a server capabilities object;
// nil means the server declared no task support (requestors then should not
// create tasks).
func ServerTasksFrom(caps json.RawMessage) (*ServerTasksCapability, error) {
	return tasksFrom(caps, DecodeServerTasksCapability)
}

// ClientTasksFrom reads capabilities.tasks from a client capabilities object.
func ClientTasksFrom(caps json.RawMessage) (*ClientTasksCapability, error) {
	return tasksFrom(caps, DecodeClientTasksCapability)
}

// tasksFrom decodes the "tasks" member of a capabilities object; nil when
// there is none.
func tasksFrom[T any](caps json.RawMessage, decode func([]byte) (T, error)) (*T, error) {
	v, ok, err := tasksMember(caps)
	if err != nil || !ok {
		return nil, err
	}
	c, err := decode(v)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// patchMember sets (or, for a nil value, removes) key in a raw object.
func patchMember(obj json.RawMessage, what, key string, val any, remove bool) (json.RawMessage, error) {
	ms, err := objectOrEmpty(obj, what, rpc.CodeInvalidParams)
	if err != nil {
		return nil, err
	}
	if remove {
		return rawjson.Append(nil, rawjson.Without(ms, key)), nil
	}
	b, err := json.Marshal(val)
	if err != nil {
		return nil, rpc.As(err)
	}
	return rawjson.Append(nil, rawjson.With(ms, key, b)), nil
}

// PatchServerTasks returns caps with "tasks" replaced by c, or removed when c
// is nil (e.g. on a session that did not negotiate 2025-11-25). Every other
// capability stays verbatim.
func PatchServerTasks(caps json.RawMessage, c *ServerTasksCapability) (json.RawMessage, error) {
	return patchMember(caps, "capabilities", "tasks", c, c == nil)
}

// PatchClientTasks returns caps with "tasks" replaced by c, or removed when c
// is nil. Every other capability stays verbatim.
func PatchClientTasks(caps json.RawMessage, c *ClientTasksCapability) (json.RawMessage, error) {
	return patchMember(caps, "capabilities", "tasks", c, c == nil)
}

// capabilitiesOf returns the members of an initialize params/result object
// and its raw "capabilities" member.
func capabilitiesOf(obj json.RawMessage, what string) ([]member, json.RawMessage, error) {
	ms, err := objectMembers(obj, what, rpc.CodeInvalidParams)
	if err != nil {
		return nil, nil, err
	}
	v, ok := rawjson.Lookup(ms, "capabilities")
	if !ok || rawjson.IsNull(v) {
		return ms, nil, nil
	}
	if rawjson.Kind(v) != "an object" {
		return nil, nil, InvalidParamsError("%s: capabilities must be an object, got %s", what, rawjson.Kind(v))
	}
	return ms, v, nil
}

// InitializeResultTasks reads capabilities.tasks from a raw InitializeResult.
func InitializeResultTasks(result json.RawMessage) (*ServerTasksCapability, error) {
	_, caps, err := capabilitiesOf(result, "InitializeResult")
	if err != nil {
		return nil, err
	}
	return ServerTasksFrom(caps)
}

// PatchInitializeResultTasks replaces (or, for nil, removes)
// capabilities.tasks in a raw InitializeResult, keeping every other member
// (protocolVersion, serverInfo, instructions, other capabilities) verbatim.
func PatchInitializeResultTasks(result json.RawMessage, c *ServerTasksCapability) (json.RawMessage, error) {
	ms, caps, err := capabilitiesOf(result, "InitializeResult")
	if err != nil {
		return nil, err
	}
	caps, err = PatchServerTasks(caps, c)
	if err != nil {
		return nil, err
	}
	return rawjson.Append(nil, rawjson.With(ms, "capabilities", caps)), nil
}

// InitializeParamsTasks reads capabilities.tasks from raw initialize params.
func InitializeParamsTasks(params json.RawMessage) (*ClientTasksCapability, error) {
	_, caps, err := capabilitiesOf(params, "initialize params")
	if err != nil {
		return nil, err
	}
	return ClientTasksFrom(caps)
}

// PatchInitializeParamsTasks replaces (or, for nil, removes)
// capabilities.tasks in raw initialize params, keeping everything else.
func PatchInitializeParamsTasks(params json.RawMessage, c *ClientTasksCapability) (json.RawMessage, error) {
	ms, caps, err := capabilitiesOf(params, "initialize params")
	if err != nil {
		return nil, err
	}
	caps, err = PatchClientTasks(caps, c)
	if err != nil {
		return nil, err
	}
	return rawjson.Append(nil, rawjson.With(ms, "capabilities", caps)), nil
}

// ProtocolVersionOf reads protocolVersion from raw initialize params or an
// InitializeResult ("" when absent). Legacy tasks exist only when it is
// ProtocolVersion.
func ProtocolVersionOf(obj json.RawMessage) (string, error) {
	f, err := openObject(obj, "initialize message", rpc.CodeInvalidParams)
	if err != nil {
		return "", err
	}
	v, _, err := f.str("protocolVersion", false)
	return v, err
}
