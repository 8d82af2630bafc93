package modernface

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/ops/audit"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/translate"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
)

// modernMetaKeys are the per-request keys a legacy server knows nothing of.
var modernMetaKeys = []string{modern.MetaKeyProtocolVersion, modern.MetaKeyClientCapabilities,
	modern.MetaKeyClientInfo, modern.MetaKeyLogLevel}

// legacyParams returns a modern request's params ready for the legacy
// upstream: without the 2026 per-request _meta keys (progressToken and other
// keys stay), without the MRTR retry members, and without drop. A params
// object (or null) is edited in place with the raw-JSON layer; anything else
// gets the -32602 of a reflective decode.
func legacyParams(params json.RawMessage, drop ...string) (json.RawMessage, error) {
	if rawjson.IsNull(params) {
		return json.RawMessage("{}"), nil
	}
	if !rawjson.IsObject(params) {
		return legacyParamsDecoded(params, drop...)
	}
	o, err := rawjson.Decode(params)
	if err != nil {
		return legacyParamsDecoded(params, drop...)
	}
	o.Del("inputResponses", "requestState")
	o.Del(drop...)
	if a, ok := o.Get("arguments"); ok && rawjson.IsNull(a) {
		o.Del("arguments") // go-sdk clients send null for no arguments; legacy servers reject it
	}
	if m, ok := o.Get("_meta"); ok {
		switch {
		case rawjson.IsNull(m):
			o.Del("_meta")
		case !rawjson.IsObject(m):
			return legacyParamsDecoded(params, drop...)
		default:
			meta, err := rawjson.Decode(m)
			if err != nil {
				return legacyParamsDecoded(params, drop...)
			}
			meta.Del(modernMetaKeys...)
			if meta.Len() == 0 {
				o.Del("_meta")
			} else {
				o.Put("_meta", meta.Bytes())
			}
		}
	}
	return o.Bytes(), nil
}

// withSortedMember returns params with member key set to val, written as
// encoding a map[string]json.RawMessage of them writes it (members sorted by
// name, names re-encoded, values compacted, the last duplicate kept; the
// task-augmented call has always gone upstream in that form), but member
// by member: a large call's arguments are copied once, not decoded into a
// map and encoded again. false when params is not a JSON object.
func withSortedMember(params []byte, key string, val json.RawMessage) ([]byte, bool) {
	if !rawjson.Valid(params) || !rawjson.IsObject(params) {
		return nil, false
	}
	ms, err := rawjson.Members(params)
	if err != nil {
		return nil, false
	}
	ms = rawjson.With(rawjson.Dedup(ms), key, val)
	slices.SortFunc(ms, func(a, b rawjson.Member) int { return strings.Compare(a.Key, b.Key) })
	for i := range ms {
		ms[i].RawKey = rawjson.Key(ms[i].Key)
	}
	b, err := rawjson.AppendCompact(nil, ms)
	return b, err == nil
}

// legacyReady reports whether legacyParams would leave params (a compact
// object without duplicate keys, as translate writes it) as they are: no
// MRTR retry members, no null arguments, and an _meta (if any) that is a
// non-empty object without the 2026 per-request keys. One walk of the top
// level instead of a decode and a write of a large call.
func legacyReady(params json.RawMessage) bool {
	if !rawjson.IsObject(params) {
		return false
	}
	for k, v := range rawjson.All(params) {
		switch string(rawjson.KeyBytes(k)) {
		case "inputResponses", "requestState":
			return false
		case "arguments":
			if rawjson.IsNull(v) {
				return false
			}
		case "_meta":
			if !rawjson.IsObject(v) {
				return false
			}
			n := 0
			for mk := range rawjson.All(v) {
				n++
				if slices.Contains(modernMetaKeys, string(rawjson.KeyBytes(mk))) {
					return false
				}
			}
			if n == 0 {
				return false
			}
		}
	}
	return true
}

// legacyParamsDecoded is legacyParams by a reflective decode, for params
// that are not a plain object: its errors name what is wrong.
func legacyParamsDecoded(params json.RawMessage, drop ...string) (json.RawMessage, error) {
	var o map[string]json.RawMessage
	if err := json.Unmarshal(params, &o); err != nil {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: %v", err)
	}
	if o == nil {
		o = map[string]json.RawMessage{}
	}
	for _, k := range append([]string{"inputResponses", "requestState"}, drop...) {
		delete(o, k)
	}
	if a, ok := o["arguments"]; ok && string(a) == "null" {
		delete(o, "arguments")
	}
	if m, ok := o["_meta"]; ok {
		var meta map[string]json.RawMessage
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: _meta: %v", err)
		}
		for _, k := range modernMetaKeys {
			delete(meta, k)
		}
		if len(meta) == 0 {
			delete(o, "_meta")
		} else {
			o["_meta"], _ = json.Marshal(meta)
		}
	}
	return modern.Marshal(o)
}

// discover answers server/discover from the upstream's InitializeResult
// (M-36, M-49: the legacy tasks capability becomes the extension).
func (f *Face) discover(ctx context.Context, c *call) (json.RawMessage, error) {
	s, err := f.session(ctx, c)
	if err != nil {
		return nil, err
	}
	init := s.InitializeResult()
	if len(init) == 0 {
		return nil, rpc.Errorf(rpc.CodeInternalError, "legacy upstream %s: no InitializeResult for this session", f.pool.Target())
	}
	d, err := translate.DiscoverResultFromInitialize(init, translate.DiscoverOptions{TTLMs: f.opts.CacheTTL.Milliseconds(), CacheScope: modern.CachePrivate})
	if err != nil {
		return nil, rpc.As(err)
	}
	if d.ServerInfo == nil {
		info := f.impl
		d.ServerInfo = &info
	}
	// The versions a -32022 names are the ones discover lists (M-38): every
	// version this endpoint serves, the legacy revisions of a dual-era
	// endpoint included (M-44).
	for _, v := range f.opts.SupportedVersions {
		if !slices.Contains(d.SupportedVersions, v) {
			d.SupportedVersions = append(d.SupportedVersions, v)
		}
	}
	return marshalResult(d)
}

// toolsList answers tools/list from the upstream's, without the legacy
// execution.taskSupport (the 2026 server decides per request), noting each
// tool's support for tools/call.
func (f *Face) toolsList(ctx context.Context, c *call) (json.RawMessage, error) {
	s, err := f.session(ctx, c)
	if err != nil {
		return nil, err
	}
	params, err := legacyParams(c.params)
	if err != nil {
		return nil, err
	}
	res, err := s.Call(ctx, legacy.MethodToolsList, params, legacyup.CallOptions{})
	if next := f.replacement(ctx, c, s, err); next != nil {
		s = next
		res, err = s.Call(ctx, legacy.MethodToolsList, params, legacyup.CallOptions{})
	}
	if err != nil {
		return nil, upstreamError(c.method, err)
	}
	s.NoteTools(res)
	out, _, err := translate.ToolsListToModern(res, f.opts.CacheTTL.Milliseconds(), modern.CachePrivate)
	if err != nil {
		return nil, rpc.As(err)
	}
	return f.finish(c.method, out, "")
}

// passthrough forwards a method with the same meaning in both eras
// (prompts/*, resources/*, completion/complete).
func (f *Face) passthrough(ctx context.Context, c *call) (json.RawMessage, error) {
	s, err := f.session(ctx, c)
	if err != nil {
		return nil, err
	}
	params, err := legacyParams(c.params)
	if err != nil {
		return nil, err
	}
	if modern.MRTRCapable(c.method) {
		return f.callWithInput(ctx, c, s, params, nil)
	}
	res, err := s.Call(ctx, c.method, params, legacyup.CallOptions{})
	if next := f.replacement(ctx, c, s, err); next != nil {
		res, err = next.Call(ctx, c.method, params, legacyup.CallOptions{})
	}
	if err != nil {
		return nil, upstreamError(c.method, err)
	}
	return f.finish(c.method, res, "")
}

// toolsCall runs a tools/call: task-augmented upstream when this request
// declared the extension and the tool allows tasks (M-50), else synchronous;
// -32021 for a required tool and a non-declaring request (M-51).
func (f *Face) toolsCall(ctx context.Context, c *call) (json.RawMessage, error) {
	var p struct {
		Name string `json:"name"`
	}
	if p.Name = c.stringParam("name"); p.Name == "" {
		if err := json.Unmarshal(c.params, &p); err != nil || p.Name == "" {
			return nil, rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: tools/call needs a string params.name")
		}
	}
	s, err := f.session(ctx, c)
	if err != nil {
		return nil, err
	}
	support, err := s.ToolSupport(ctx, p.Name)
	if next := f.replacement(ctx, c, s, err); next != nil {
		s = next
		support, err = s.ToolSupport(ctx, p.Name)
	}
	if err != nil {
		return nil, upstreamError(c.method, err)
	}
	toolsCall := s.TasksCapability() != nil && s.TasksCapability().ToolsCall
	// The front (or go-sdk's middleware) decoded and validated _meta (M-37).
	lc, err := translate.ToolsCallToLegacyMeta(c.params, c.meta, support, toolsCall)
	if err != nil {
		return nil, err
	}
	params := lc.Params
	if !legacyReady(params) {
		if params, err = legacyParams(lc.Params); err != nil {
			return nil, err
		}
	}
	if lc.AsTask {
		// The ttl the bridge asks for; the upstream may override it (L-20).
		task, _ := json.Marshal(legacy.TaskMetadata{TTL: legacy.Millis(f.opts.TaskTTL.Milliseconds())})
		if b, ok := withSortedMember(params, "task", task); ok {
			params = b
		}
	}
	return f.callWithInput(ctx, c, s, params, &lc)
}

// finishCall turns the upstream's final answer to an MRTR-capable call into
// the modern result.
func (f *Face) finishCall(ctx context.Context, c *call, s *legacyup.Session, lc *translate.LegacyCall, res json.RawMessage) (json.RawMessage, error) {
	if lc != nil {
		// Read once: whether it created a task, and the task it created.
		ct, isTask, err := legacy.ParseCreated(res)
		if isTask {
			if !lc.AsTask {
				return nil, rpc.Errorf(rpc.CodeInternalError, "legacy upstream %s answered a tools/call without \"task\" with a CreateTaskResult", f.pool.Target())
			}
			if err != nil {
				return nil, rpc.Errorf(rpc.CodeInternalError, "legacy upstream %s: invalid CreateTaskResult: %s", f.pool.Target(), rpc.As(err).Message)
			}
			return f.createTask(ctx, c, s, ct)
		}
	}
	// A task-augmented call the upstream ran synchronously (it may ignore
	// "task", L-05) is an ordinary result for the modern client too.
	return f.finish(c.method, res, modern.ResultComplete)
}

// createTask makes the local task durable, then answers with the flat
// CreateTaskResult (M-53: tasks/get resolves before the client sees the id).
func (f *Face) createTask(ctx context.Context, c *call, s *legacyup.Session, ct legacy.CreateTaskResult) (json.RawMessage, error) {
	mt, err := translate.CreatedToModern(ct)
	if err != nil {
		return nil, rpc.As(err)
	}
	var name struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(c.params, &name)
	created, err := legacy.ParseTime(ct.Task.CreatedAt)
	if err != nil {
		created = f.now()
	}
	updated, err := legacy.ParseTime(ct.Task.LastUpdatedAt)
	if err != nil {
		updated = created
	}
	rec := sessionmap.Task{
		ID:                sessionmap.NewTaskID(),
		Scope:             c.scope(),
		Direction:         sessionmap.ModernToLegacy,
		Origin:            sessionmap.OriginUpstreamTask,
		Upstream:          f.pool.Target(),
		UpstreamTaskID:    ct.Task.TaskID,
		UpstreamSessionID: s.ID(),
		Method:            modern.MethodToolsCall,
		ToolName:          name.Name,
		RequestedTTLMs:    legacy.Millis(f.opts.TaskTTL.Milliseconds()),
		TTLMs:             ct.Task.TTL,
		Status:            sessionmap.StatusWorking,
		CreatedAt:         created,
		LastUpdatedAt:     updated,
		PollIntervalMs:    ct.Task.PollInterval,
	}
	if err := f.store.CreateTask(ctx, rec); err != nil {
		// The upstream task runs on; the client never learns its id, so
		// there is nothing it could poll. Ask the upstream to stop it.
		go func() { _, _ = s.CancelTask(context.WithoutCancel(ctx), ct.Task.TaskID) }()
		return nil, rpc.Errorf(rpc.CodeInternalError, "the bridge could not record the task durably: %v", err)
	}
	rt := f.runtime(rec, c.principal, c.authorization, s)
	if ct.Task.Status == legacy.StatusInputRequired {
		// Created asking already (the common 2025-11-25 shape: create the
		// task, then ask inside it): the task exists upstream, so the client
		// gets it, and its questions reach tasks/get as inputRequests (M-55)
		// once the side channel delivers them — not an MRTR round that would
		// hide a task the client asked for (compose.go).
		rt.ensureStream(s)
	}
	mt.TaskID = rec.ID
	mt.Status = modern.StatusWorking
	mt.Meta = f.resultMeta()
	f.log.Debug("modern face: task created", "task", rec.ID, "tool", rec.ToolName)
	f.audit(audit.ActionCreate, c.principal, rec.ID, rec.ToolName, "created", 0)
	return marshalResult(mt)
}

// notifyFor relays the upstream's progress notifications of a synchronous
// call to the modern request's stream (M-35: tasks get none).
func (f *Face) notifyFor(ctx context.Context, c *call) func(method string, params json.RawMessage) {
	if c.progress == nil || c.meta.ProgressToken == nil {
		return nil
	}
	return func(method string, params json.RawMessage) {
		if method != legacy.MethodProgress {
			return // notifications/message needs a logLevel the bridge never sets upstream (M-46)
		}
		var p mcp.ProgressNotificationParams
		if json.Unmarshal(params, &p) != nil {
			return
		}
		c.progress(ctx, &p)
	}
}

// errorsIsGone reports whether err says the upstream session ended.
func errorsIsGone(err error) bool { return errors.Is(err, legacyup.ErrSessionGone) }

// members returns the request's params object split into members, once
// (false when the params are no object).
func (c *call) members() (rawjson.Object, bool) {
	c.objOnce.Do(func() {
		if rawjson.IsObject(c.params) {
			o, err := rawjson.Decode(c.params)
			c.obj, c.objOK = o, err == nil
		}
	})
	return c.obj, c.objOK
}

// withMembers gives c its params' members, already split (the lean path's
// shape check did it).
func (c *call) withMembers(o rawjson.Object) {
	c.objOnce.Do(func() { c.obj, c.objOK = o, true })
}

// stringParam returns the string member key of the params, "" when it is
// absent, not a string or the params are no object (callers that need more
// fall back to a reflective decode).
func (c *call) stringParam(key string) string {
	o, ok := c.members()
	if !ok {
		return ""
	}
	v, ok := o.Get(key)
	if !ok || rawjson.Kind(v) != "a string" {
		return ""
	}
	var out string
	if json.Unmarshal(v, &out) != nil {
		return ""
	}
	return out
}
