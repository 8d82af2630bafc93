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

// Validate checks that the extra members are JSON.
func (c ServerTasksCapability) Validate() error {
	if err := validateExtra("capabilities.tasks", c.Extra); err != nil {
		return err
	}
	return validateExtra("capabilities.tasks.requests", c.RequestsExtra)
}

// MarshalJSON encodes e.g. {"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}.
func (c ServerTasksCapability) MarshalJSON() ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	known := map[string]json.RawMessage{}
	if c.List {
		known["list"] = leaf
	}
	if c.Cancel {
		known["cancel"] = leaf
	}
	reqKnown := map[string]json.RawMessage{}
	if c.ToolsCall {
		reqKnown["tools"] = capObject(map[string]json.RawMessage{"call": leaf}, nil)
	}
	if len(reqKnown) > 0 || len(c.RequestsExtra) > 0 {
		known["requests"] = capObject(reqKnown, c.RequestsExtra)
	}
	return capObject(known, c.Extra), nil
}

// UnmarshalJSON decodes like DecodeServerTasksCapability.
func (c *ServerTasksCapability) UnmarshalJSON(data []byte) error {
	return assign(c, data, DecodeServerTasksCapability)
}

// Validate checks that the extra members are JSON.
func (c ClientTasksCapability) Validate() error {
	if err := validateExtra("capabilities.tasks", c.Extra); err != nil {
		return err
	}
	return validateExtra("capabilities.tasks.requests", c.RequestsExtra)
}

// MarshalJSON encodes e.g. {"requests":{"sampling":{"createMessage":{}},"elicitation":{"create":{}}}}.
func (c ClientTasksCapability) MarshalJSON() ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	known := map[string]json.RawMessage{}
	if c.List {
		known["list"] = leaf
	}
	if c.Cancel {
		known["cancel"] = leaf
	}
	reqKnown := map[string]json.RawMessage{}
	if c.SamplingCreateMessage {
		reqKnown["sampling"] = capObject(map[string]json.RawMessage{"createMessage": leaf}, nil)
	}
	if c.ElicitationCreate {
		reqKnown["elicitation"] = capObject(map[string]json.RawMessage{"create": leaf}, nil)
	}
	if len(reqKnown) > 0 || len(c.RequestsExtra) > 0 {
		known["requests"] = capObject(reqKnown, c.RequestsExtra)
	}
	return capObject(known, c.Extra), nil
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
	f, err := openObject(data, "capabilities.tasks", rpc.CodeInvalidParams)
	if err != nil {
		return ServerTasksCapability{}, err
	}
	var c ServerTasksCapability
	if c.List, err = f.flag("list"); err != nil {
		return ServerTasksCapability{}, err
	}
	if c.Cancel, err = f.flag("cancel"); err != nil {
		return ServerTasksCapability{}, err
	}
	req, err := f.group("requests")
	if err != nil {
		return ServerTasksCapability{}, err
	}
	tools, err := req.group("tools")
	if err != nil {
		return ServerTasksCapability{}, err
	}
	if c.ToolsCall, err = tools.flag("call"); err != nil {
		return ServerTasksCapability{}, err
	}
	c.Extra = f.extra("list", "cancel", "requests")
	c.RequestsExtra = req.extra("tools")
	return c, nil
}

// DecodeClientTasksCapability decodes the value of a client's
// capabilities.tasks.
func DecodeClientTasksCapability(data []byte) (ClientTasksCapability, error) {
	f, err := openObject(data, "capabilities.tasks", rpc.CodeInvalidParams)
	if err != nil {
		return ClientTasksCapability{}, err
	}
	var c ClientTasksCapability
	if c.List, err = f.flag("list"); err != nil {
		return ClientTasksCapability{}, err
	}
	if c.Cancel, err = f.flag("cancel"); err != nil {
		return ClientTasksCapability{}, err
	}
	req, err := f.group("requests")
	if err != nil {
		return ClientTasksCapability{}, err
	}
	sampling, err := req.group("sampling")
	if err != nil {
		return ClientTasksCapability{}, err
	}
	if c.SamplingCreateMessage, err = sampling.flag("createMessage"); err != nil {
		return ClientTasksCapability{}, err
	}
	elicit, err := req.group("elicitation")
	if err != nil {
		return ClientTasksCapability{}, err
	}
	if c.ElicitationCreate, err = elicit.flag("create"); err != nil {
		return ClientTasksCapability{}, err
	}
	c.Extra = f.extra("list", "cancel", "requests")
	c.RequestsExtra = req.extra("sampling", "elicitation")
	return c, nil
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
	v, ok, err := tasksMember(caps)
	if err != nil || !ok {
		return nil, err
	}
	c, err := DecodeServerTasksCapability(v)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// ClientTasksFrom reads capabilities.tasks from a client capabilities object.
func ClientTasksFrom(caps json.RawMessage) (*ClientTasksCapability, error) {
	v, ok, err := tasksMember(caps)
	if err != nil || !ok {
		return nil, err
	}
	c, err := DecodeClientTasksCapability(v)
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
