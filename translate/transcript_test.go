package translate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
	"github.com/tasksbridge/tasksbridge/internal/testkit/transcript"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// The transcript suite: every testdata/*.txtar file names a handler below
// ("func: X", X being the translate function it drives), feeds its input
// sections through it and compares the emitted sections with the expected
// ".out" ones; every emitted message is validated against the official
// schema definition the file names (internal/testkit/transcript).
//
// Section conventions: *.in / legacy.* / modern.* inputs; legacy.out and
// modern.out the translated message; error.out a whole JSON-RPC error
// response (id from the "id" directive, default 1); decision.out the internal
// decision (no protocol schema: "schema decision.out: none").

const defaultNow = "2026-09-01T12:00:00Z"

var bridgeInfo = modern.Implementation{Name: "tasksbridge", Version: "test"}

// directives every handler may read; the suite rejects others (typos).
var directives = []string{"id", "immediate", "pinned", "presented", "known", "task", "key", "idsource",
	"loglevel", "support", "server-tools-call", "required", "ttl-ms", "cache-scope", "list-tasks", "method",
	"task-augmented", "task-id", "ttl", "max-ttl", "poll", "answered", "subscription"}

func newSuite(t testing.TB) *transcript.Suite {
	return &transcript.Suite{
		Handlers:      handlers,
		Validate:      transcript.SchemaValidator(schemacheck.Load(t)),
		AllowNoSchema: func(section string) bool { return strings.HasPrefix(section, "decision.") },
		Directives:    directives,
		Require:       []string{"ids"},
	}
}

var handlers = map[string]transcript.Handler{
	"CreateTaskResultToLegacy": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("modern.in")
		if err != nil {
			return nil, err
		}
		r, err := CreateTaskResultToLegacy(in, CreateOptions{ImmediateResponse: f.Value("immediate")})
		return emit(f, "legacy.out", r, err), nil
	},
	"CreateTaskResultToModern": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("legacy.in")
		if err != nil {
			return nil, err
		}
		r, err := CreateTaskResultToModern(in)
		return emit(f, "modern.out", r, err), nil
	},
	"GetTaskResultToLegacy": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("modern.in")
		if err != nil {
			return nil, err
		}
		r, err := GetTaskResultToLegacy(in)
		return emit(f, "legacy.out", r, err), nil
	},
	"StatusNotificationToLegacy": func(f *transcript.File) (transcript.Output, error) {
		params, err := notificationParams(f, "modern.in")
		if err != nil {
			return nil, err
		}
		p, err := StatusNotificationToLegacy(params)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		return emit(f, "legacy.out", legacy.TaskStatusNotification{Params: p}, nil), nil
	},
	"MergeLegacyTask": func(f *transcript.File) (transcript.Output, error) {
		msgs, err := f.Messages("legacy.in")
		if err != nil || len(msgs) != 2 {
			return nil, fmt.Errorf("legacy.in must hold the local and the next Task: %v", err)
		}
		local, err1 := legacy.DecodeTask(msgs[0])
		next, err2 := legacy.DecodeTask(msgs[1])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("decode: %v %v", err1, err2)
		}
		merged, changed := MergeLegacyTask(local, next, boolDirective(f, "pinned"))
		out := emit(f, "legacy.out", merged, nil)
		out.Add("decision.out", map[string]any{"changed": changed})
		return out, nil
	},
	"MergeStatus": func(f *transcript.File) (transcript.Output, error) {
		rows, err := f.Messages("decision.in")
		if err != nil {
			return nil, err
		}
		out := transcript.Output{}
		for _, r := range rows {
			var row struct {
				Local, Upstream string
				Pinned          bool
			}
			if err := json.Unmarshal(r, &row); err != nil {
				return nil, err
			}
			out.Add("decision.out", MergeStatus(legacy.TaskStatus(row.Local), legacy.TaskStatus(row.Upstream), row.Pinned))
		}
		return out, nil
	},
	"DecideLegacyCancel": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("legacy.in")
		if err != nil {
			return nil, err
		}
		local, err := legacy.DecodeTask(in)
		if err != nil {
			return nil, err
		}
		d := DecideLegacyCancel(local, clock(f))
		out := transcript.Output{}
		out.Add("decision.out", map[string]any{"action": d.Action.String(), "forwardUpstream": d.ForwardUpstream})
		if d.Action == CancelReject {
			addError(f, out, d.Error)
		} else {
			out.Add("legacy.out", legacy.CancelTaskResult{Task: d.Task})
		}
		return out, nil
	},
	"ModernCancelReply": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("legacy.in")
		if err != nil {
			return nil, err
		}
		r, err := ModernCancelReply(in, boolDirective(f, "known"), f.Value("task"))
		return emit(f, "modern.out", r, err), nil
	},
	"TasksResultOutcome": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("modern.in")
		if err != nil {
			return nil, err
		}
		g, err := modern.DecodeGetTaskResult(in)
		if err != nil {
			return nil, err
		}
		presented := map[string]bool{}
		for _, k := range strings.Fields(f.Value("presented")) {
			presented[k] = true
		}
		o, err := TasksResultOutcome(g.DetailedTask, boolDirective(f, "pinned"), presented)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		out := transcript.Output{}
		dec := map[string]any{"kind": o.Kind.String()}
		if o.Kind == ResultWait {
			dec["present"] = orEmpty(o.Present)
		}
		out.Add("decision.out", dec)
		switch o.Kind {
		case ResultReady:
			out.Add("legacy.out", o.Result)
		case ResultError:
			addError(f, out, o.Error)
		}
		return out, nil
	},
	"InputRequestToLegacy": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("modern.in")
		if err != nil {
			return nil, err
		}
		g, err := modern.DecodeGetTaskResult(in)
		if err != nil {
			return nil, err
		}
		caps, err := clientCaps(f)
		if err != nil {
			return nil, err
		}
		ids := idSource(f)
		out := transcript.Output{}
		for _, k := range g.InputRequests.Keys() {
			sr, err := InputRequestToLegacy(f.Value("task"), k, g.InputRequests[k], caps, ids)
			if err != nil {
				addError(f, out, rpc.As(err))
				continue
			}
			out.Add("legacy.out", sr.Request)
			out.Add("decision.out", map[string]any{"key": sr.Key, "elicitationId": sr.ElicitationID})
		}
		return out, nil
	},
	"InputResponseFromLegacy": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("modern.in")
		if err != nil {
			return nil, err
		}
		g, err := modern.DecodeGetTaskResult(in)
		if err != nil {
			return nil, err
		}
		key := f.Value("key")
		req, ok := g.InputRequests[key]
		if !ok {
			return nil, fmt.Errorf("modern.in has no input request %q", key)
		}
		resp, err := f.Message("legacy.in")
		if err != nil {
			return nil, err
		}
		answer, err := InputResponseFromLegacy(req, resp)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		p, err := TasksUpdateParams(g.TaskID, modern.InputResponses{key: answer}, bridgeMeta())
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		return emitRequest(f, "modern.out", modern.MethodTasksUpdate, p), nil
	},
	"UpstreamRequestMeta": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("legacy.in")
		if err != nil {
			return nil, err
		}
		m, err := UpstreamRequestMeta(initParams(in), f.Value("loglevel"), &bridgeInfo)
		return emit(f, "modern.out", m, err), nil
	},
	"RequestToModern": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("legacy.in")
		if err != nil {
			return nil, err
		}
		r, err := legacy.DecodeRequest(in)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		meta := bridgeMeta()
		if f.Has("legacy.init") {
			ip, err := f.Message("legacy.init")
			if err != nil {
				return nil, err
			}
			if meta, err = UpstreamRequestMeta(initParams(ip), "", &bridgeInfo); err != nil {
				return nil, err
			}
		}
		u, err := RequestToModern(r.Method, r.Params, meta, legacy.TaskSupport(f.Value("support")))
		// The legacy face stamps its session's meta prepared: same answer.
		if d := preparedDiff(r.Method, r.Params, meta, legacy.TaskSupport(f.Value("support")), u, err); d != "" {
			return nil, fmt.Errorf("%s", d)
		}
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		out := emitRequest(f, "modern.out", u.Method, u.Params)
		dec := map[string]any{"taskRequested": u.TaskRequested}
		if u.RequestedTTL != nil {
			dec["requestedTtl"] = *u.RequestedTTL
		}
		out.Add("decision.out", dec)
		return out, nil
	},
	"ToolsCallToLegacy": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("modern.in")
		if err != nil {
			return nil, err
		}
		req, err := modern.DecodeRequest(in)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		c, err := ToolsCallToLegacy(req.Params, legacy.TaskSupport(f.Value("support")), boolDirective(f, "server-tools-call"))
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		out := emitRequest(f, "legacy.out", legacy.MethodToolsCall, c.Params)
		out.Add("decision.out", map[string]any{"asTask": c.AsTask})
		return out, nil
	},
	"ToolsListToLegacy": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("modern.in")
		if err != nil {
			return nil, err
		}
		req := map[string]bool{}
		for _, n := range strings.Fields(f.Value("required")) {
			req[n] = true
		}
		r, err := ToolsListToLegacy(in, func(n string) bool { return req[n] })
		return emit(f, "legacy.out", r, err), nil
	},
	"ResultToModern": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("legacy.in")
		if err != nil {
			return nil, err
		}
		r, err := ResultToModern(f.Value("method"), in, intDirective(f, "ttl-ms", 0), modern.CacheScope(f.Value("cache-scope")))
		return emit(f, "modern.out", r, err), nil
	},
	"ToolsListToModern": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("legacy.in")
		if err != nil {
			return nil, err
		}
		r, support, err := ToolsListToModern(in, intDirective(f, "ttl-ms", 0), modern.CacheScope(f.Value("cache-scope")))
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		out := emit(f, "modern.out", r, nil)
		out.Add("decision.out", support)
		return out, nil
	},
	"InitializeResultFromDiscover": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("modern.in")
		if err != nil {
			return nil, err
		}
		r, err := InitializeResultFromDiscover(in, InitializeOptions{ListTasks: boolDirective(f, "list-tasks"), ServerInfo: &bridgeInfo})
		return emit(f, "legacy.out", r, err), nil
	},
	"DiscoverResultFromInitialize": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("legacy.in")
		if err != nil {
			return nil, err
		}
		r, err := DiscoverResultFromInitialize(in, DiscoverOptions{TTLMs: intDirective(f, "ttl-ms", 0), CacheScope: modern.CacheScope(f.Value("cache-scope"))})
		return emit(f, "modern.out", r, err), nil
	},
	"LegacyInitializeParams": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("modern.in")
		if err != nil {
			return nil, err
		}
		req, err := modern.DecodeRequest(in)
		if err != nil {
			return nil, err
		}
		meta, err := modern.DecodeRequestMeta(req.Params)
		if err != nil {
			return nil, err
		}
		r, err := LegacyInitializeParams(meta, bridgeInfo)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		return emitRequest(f, "legacy.out", legacy.MethodInitialize, r), nil
	},
	"GetTaskResultToModern": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("legacy.in")
		if err != nil {
			return nil, err
		}
		var outcome *LegacyOutcome
		if f.Has("legacy.payload") {
			p, err := f.Message("legacy.payload")
			if err != nil {
				return nil, err
			}
			o, err := LegacyOutcomeFromResponse(p)
			if err != nil {
				return emit(f, "", nil, err), nil
			}
			outcome = &o
		}
		var pending modern.InputRequests
		if f.Has("legacy.pending") {
			reqs, err := f.Messages("legacy.pending")
			if err != nil {
				return nil, err
			}
			ids := idSource(f)
			pending = modern.InputRequests{}
			for _, r := range reqs {
				e, err := InputRequestFromLegacy(r, ids)
				if err != nil {
					return emit(f, "", nil, err), nil
				}
				pending[e.Key] = e.Request
			}
		}
		r, err := GetTaskResultToModern(in, outcome, pending)
		return emit(f, "modern.out", r, err), nil
	},
	"TaskNotificationToModern": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("legacy.in")
		if err != nil {
			return nil, err
		}
		var outcome *LegacyOutcome
		if f.Has("legacy.payload") {
			p, _ := f.Message("legacy.payload")
			o, err := LegacyOutcomeFromResponse(p)
			if err != nil {
				return nil, err
			}
			outcome = &o
		}
		d, err := DetailedTaskFromLegacy(in, outcome, nil)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		p, err := TaskNotificationToModern(d, mustID(f.Value("subscription")))
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		b, err := modern.EncodeNotification(modern.NotificationTasks, p)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		return transcript.Output{"modern.out": {b}}, nil
	},
	"InputRequestFromLegacy": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("legacy.in")
		if err != nil {
			return nil, err
		}
		e, err := InputRequestFromLegacy(in, idSource(f))
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		out := emit(f, "modern.out", modern.InputRequests{e.Key: e.Request}, nil)
		out.Add("decision.out", map[string]any{"legacyId": e.LegacyID, "taskId": e.TaskID, "elicitationId": e.ElicitationID})
		return out, nil
	},
	"InputResponseToLegacy": func(f *transcript.File) (transcript.Output, error) {
		lreq, err := f.Message("legacy.request")
		if err != nil {
			return nil, err
		}
		e, err := InputRequestFromLegacy(lreq, idSource(f))
		if err != nil {
			return nil, err
		}
		in, err := f.Message("modern.in")
		if err != nil {
			return nil, err
		}
		req, err := modern.DecodeRequest(in)
		if err != nil {
			return nil, err
		}
		u, err := modern.DecodeUpdateTaskParams(req.Params)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		answer, ok := u.InputResponses[e.Key]
		if !ok {
			return nil, fmt.Errorf("tasks/update has no answer for key %q", e.Key)
		}
		r, err := InputResponseToLegacy(e.Request, answer)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		b, err := json.Marshal(legacy.Response{ID: e.LegacyID, Result: r})
		if err != nil {
			return nil, err
		}
		return transcript.Output{"legacy.out": {b}}, nil
	},
	"InputEntryResponse": func(f *transcript.File) (transcript.Output, error) {
		lreq, err := f.Message("legacy.request")
		if err != nil {
			return nil, err
		}
		e, err := InputRequestFromLegacy(lreq, idSource(f))
		if err != nil {
			return nil, err
		}
		if v := f.Value("task-id"); v != "" {
			e.TaskID = v // the face knows the task from the stream the request came on
		}
		in, err := f.Message("modern.in")
		if err != nil {
			return nil, err
		}
		req, err := modern.DecodeRequest(in)
		if err != nil {
			return nil, err
		}
		u, err := modern.DecodeUpdateTaskParams(req.Params)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		answer, ok := u.InputResponses[e.Key]
		if !ok {
			return nil, fmt.Errorf("tasks/update has no answer for key %q", e.Key)
		}
		r, err := e.Response(answer)
		return emit(f, "legacy.out", r, err), nil
	},
	"SelectInputResponses": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("modern.in")
		if err != nil {
			return nil, err
		}
		g, err := modern.DecodeGetTaskResult(in)
		if err != nil {
			return nil, err
		}
		upd, err := f.Message("modern.update")
		if err != nil {
			return nil, err
		}
		req, err := modern.DecodeRequest(upd)
		if err != nil {
			return nil, err
		}
		u, err := modern.DecodeUpdateTaskParams(req.Params)
		if err != nil {
			return nil, err
		}
		answered := map[string]bool{}
		for _, k := range strings.Fields(f.Value("answered")) {
			answered[k] = true
		}
		accept, ignored := SelectInputResponses(g.InputRequests, answered, u.InputResponses)
		out := emit(f, "modern.out", modern.UpdateTaskResult{}, nil)
		out.Add("decision.out", map[string]any{"forward": orEmpty(accept.Keys()), "ignored": orEmpty(ignored)})
		return out, nil
	},
	"ErrorToLegacy": func(f *transcript.File) (transcript.Output, error) {
		e, err := errorIn(f, "modern.in")
		if err != nil {
			return nil, err
		}
		out := transcript.Output{}
		addErrorTo(f, out, "legacy.out", ErrorToLegacy(f.Value("method"), boolDirective(f, "task-augmented"), e))
		return out, nil
	},
	"ErrorToModern": func(f *transcript.File) (transcript.Output, error) {
		e, err := errorIn(f, "legacy.in")
		if err != nil {
			return nil, err
		}
		out := transcript.Output{}
		addErrorTo(f, out, "modern.out", ErrorToModern(f.Value("method"), e))
		return out, nil
	},
	"ClassifyUpstreamResult": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("modern.in")
		if err != nil {
			return nil, err
		}
		k, err := ClassifyUpstreamResult(f.Value("method"), in)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		out := transcript.Output{}
		out.Add("decision.out", map[string]any{"kind": k.String()})
		if k == CallComplete {
			r, err := ResultToLegacy(in)
			if err != nil {
				return nil, err
			}
			out["legacy.out"] = append(out["legacy.out"], r)
		}
		return out, nil
	},
	"MRTRRetryParams": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("modern.in")
		if err != nil {
			return nil, err
		}
		req, err := modern.DecodeRequest(in)
		if err != nil {
			return nil, err
		}
		ir, err := f.Message("modern.input-required")
		if err != nil {
			return nil, err
		}
		ans, err := f.Message("modern.answers")
		if err != nil {
			return nil, err
		}
		answers, err := modern.DecodeInputResponses(ans)
		if err != nil {
			return nil, err
		}
		p, err := MRTRRetryParams(req.Params, ir, answers)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		return emitRequest(f, "modern.out", req.Method, p), nil
	},
	"SynthesizeTask": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("modern.in")
		if err != nil {
			return nil, err
		}
		var ttl, poll *int64
		if f.Value("ttl") != "" {
			ttl = modern.Int64(intDirective(f, "ttl", 0))
		}
		if f.Value("poll") != "" {
			poll = modern.Int64(intDirective(f, "poll", 0))
		}
		d, err := SynthesizeTask(f.Value("task-id"), in, clock(f), ttl, intDirective(f, "max-ttl", 0), poll)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		c, err := LegacyCreateTaskResult(d.Task, CreateOptions{})
		out := emit(f, "legacy.out", c, err)
		if o, err := TasksResultOutcome(d, false, nil); err == nil && o.Kind == ResultReady {
			out.Add("legacy.payload.out", o.Result)
		}
		out.Add("legacy.task.out", LegacyTaskFromDetailed(d))
		return out, nil
	},
	"CheckModernTaskRequest": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("modern.in")
		if err != nil {
			return nil, err
		}
		req, err := modern.DecodeRequest(in)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		m, err := CheckModernTaskRequest(req.Method, req.Params)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		out := transcript.Output{}
		out.Add("decision.out", map[string]any{"accepted": true, "tasksDeclared": m.TasksDeclared()})
		return out, nil
	},
	"LegacyTaskID": func(f *transcript.File) (transcript.Output, error) {
		in, err := f.Message("legacy.in")
		if err != nil {
			return nil, err
		}
		r, err := legacy.DecodeRequest(in)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		id, err := LegacyTaskID(r.Method, r.Params)
		if err != nil {
			return emit(f, "", nil, err), nil
		}
		out := transcript.Output{}
		out.Add("decision.out", map[string]any{"taskId": id})
		return out, nil
	},
}

// emit records v under section, or err as a whole JSON-RPC error response in
// error.out (any error a translate function returns must carry a JSON-RPC code).
func emit(f *transcript.File, section string, v any, err error) transcript.Output {
	out := transcript.Output{}
	if err != nil {
		addError(f, out, rpc.As(err))
		return out
	}
	if raw, ok := v.(json.RawMessage); ok {
		out[section] = append(out[section], raw)
		return out
	}
	b, err := json.Marshal(v)
	if err != nil { // strict encoders refuse invalid messages: show the refusal
		addError(f, out, rpc.As(err))
		return out
	}
	out[section] = append(out[section], b)
	return out
}

func addError(f *transcript.File, out transcript.Output, e *rpc.Error) {
	addErrorTo(f, out, "error.out", e)
}

func addErrorTo(f *transcript.File, out transcript.Output, section string, e *rpc.Error) {
	b, err := json.Marshal(legacy.Response{ID: requestID(f), Error: e})
	if err != nil {
		b, _ = json.Marshal(map[string]string{"encodeError": err.Error()})
	}
	out[section] = append(out[section], b)
}

// emitRequest records a whole JSON-RPC request with the file's id.
func emitRequest(f *transcript.File, section, method string, params any) transcript.Output {
	id := mustID(float64(1))
	if v := f.Value("id"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			id = mustID(float64(n))
		} else {
			id = mustID(strings.Trim(v, `"`))
		}
	}
	b, err := modern.EncodeRequest(id, method, params)
	if err != nil {
		out := transcript.Output{}
		addError(f, out, rpc.As(err))
		return out
	}
	return transcript.Output{section: {b}}
}

func mustID(v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		panic(err)
	}
	return id
}

func requestID(f *transcript.File) json.RawMessage {
	if v := f.Value("id"); v != "" {
		return json.RawMessage(v)
	}
	return legacy.IntID(1)
}

func boolDirective(f *transcript.File, key string) bool { return f.Value(key) == "true" }

func intDirective(f *transcript.File, key string, def int64) int64 {
	n, err := strconv.ParseInt(f.Value(key), 10, 64)
	if err != nil {
		return def
	}
	return n
}

func clock(f *transcript.File) Clock {
	s := f.Text("clock")
	if s == "" {
		s = defaultNow
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(fmt.Sprintf("clock section %q: %v", s, err)) // a broken test file, reported by the harness
	}
	return FixedClock(t)
}

func idSource(f *transcript.File) IDSource {
	p := f.Value("idsource")
	if p == "" {
		p = "id-"
	}
	return &Counter{Prefix: p}
}

func bridgeMeta() modern.RequestMeta {
	return modern.NewRequestMeta(modern.TasksCapabilities(), &bridgeInfo)
}

// clientCaps reads the legacy client's initialize request (legacy.init) and
// returns the capabilities the bridge declares upstream for it.
func clientCaps(f *transcript.File) (modern.ClientCapabilities, error) {
	in, err := f.Message("legacy.init")
	if err != nil {
		return modern.ClientCapabilities{}, err
	}
	m, err := UpstreamRequestMeta(initParams(in), "", &bridgeInfo)
	if err != nil {
		return modern.ClientCapabilities{}, err
	}
	return *m.ClientCapabilities, nil
}

// initParams accepts a whole initialize request or bare params.
func initParams(in json.RawMessage) json.RawMessage {
	if r, err := legacy.DecodeRequest(in); err == nil && r.Method == legacy.MethodInitialize {
		return r.Params
	}
	return in
}

// notificationParams returns the params of a whole notification in section.
func notificationParams(f *transcript.File, section string) (json.RawMessage, error) {
	in, err := f.Message(section)
	if err != nil {
		return nil, err
	}
	n, err := legacy.DecodeNotification(in)
	if err != nil {
		return nil, err
	}
	return n.Params, nil
}

// errorIn reads the error of a whole JSON-RPC error response.
func errorIn(f *transcript.File, section string) (*rpc.Error, error) {
	in, err := f.Message(section)
	if err != nil {
		return nil, err
	}
	r, err := legacy.DecodeResponse(in)
	if err != nil {
		return nil, err
	}
	if r.Error == nil {
		return nil, fmt.Errorf("%s is not an error response", section)
	}
	return r.Error, nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	sort.Strings(s)
	return s
}

// TestTranscripts runs every scenario; the issue asks for at least 40.
func TestTranscripts(t *testing.T) {
	n := newSuite(t).Run(t, "testdata/*.txtar")
	if n < 40 {
		t.Errorf("only %d transcript scenarios; want at least 40", n)
	}
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}
