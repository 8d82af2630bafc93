package translate

import (
	"encoding/json"
	"sort"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// ResultKind is the outcome class of a legacy tasks/result emulation step.
type ResultKind int

const (
	// ResultReady: reply with Outcome.Result (a success response).
	ResultReady ResultKind = iota + 1
	// ResultError: reply with Outcome.Error (an error response).
	ResultError
	// ResultWait: not terminal; keep blocking, first presenting
	// Outcome.Present (input keys not yet presented) to the client.
	ResultWait
)

func (k ResultKind) String() string {
	switch k {
	case ResultReady:
		return "ready"
	case ResultError:
		return "error"
	case ResultWait:
		return "wait"
	}
	return "invalid"
}

// ResultOutcome is the decision for a legacy tasks/result given the latest
// snapshot of the upstream task.
type ResultOutcome struct {
	Kind   ResultKind
	Result legacy.GetTaskPayloadResult // ResultReady
	Error  *rpc.Error                  // ResultError
	// Present lists, sorted, the inputRequests keys of an input_required task
	// that are not in presented: each becomes one legacy server→client request
	// (InputRequestToLegacy) on the waiting tasks/result stream.
	Present []string
}

// TasksResultOutcome decides what a blocked legacy tasks/result does with a
// snapshot d of the upstream task (docs/ARCHITECTURE.md, The one wait rule):
//   - pinned cancelled (or upstream cancelled) → the error "Task was
//     cancelled" (-32603; the legacy spec names no payload for a cancelled
//     task), even when the upstream finished later (L-59);
//   - completed → the upstream result exactly (isError:true included, L-29),
//     without the modern-only resultType, with
//     _meta["io.modelcontextprotocol/related-task"] merged into its existing
//     _meta (L-34, L-43, L-44);
//   - failed → that same JSON-RPC error, code, message and data (L-30,
//     L-43), as ErrorToLegacy maps it for the task-augmented tools/call that
//     created the task: the few 2026-only codes (-32020, -32021, -32022) and
//     the draft -32003 mean nothing to a legacy client and are never passed
//     on (M-45);
//   - working → keep waiting (L-42);
//   - input_required → keep waiting and present the keys not yet presented
//     (L-46; each key at most once per session, M-30).
//
// Implements L-32, L-34, L-41, L-42, L-43, L-44, L-46, L-59, L-66, M-28, M-30.
func TasksResultOutcome(d modern.DetailedTask, pinnedCancelled bool, presented map[string]bool) (ResultOutcome, error) {
	if !d.Status.Valid() {
		return ResultOutcome{}, internalErr("task %s has unknown status %q", d.TaskID, d.Status)
	}
	if pinnedCancelled || d.Status == modern.StatusCancelled {
		return ResultOutcome{Kind: ResultError, Error: legacy.TaskCancelledError(d.TaskID)}, nil
	}
	switch d.Status {
	case modern.StatusCompleted:
		if len(d.Result) == 0 {
			return ResultOutcome{}, internalErr("task %s completed upstream without a result", d.TaskID)
		}
		r, err := PayloadToLegacy(d.Result, d.TaskID)
		if err != nil {
			return ResultOutcome{}, err
		}
		return ResultOutcome{Kind: ResultReady, Result: r}, nil
	case modern.StatusFailed:
		return ResultOutcome{Kind: ResultError, Error: ErrorToLegacy(legacy.MethodToolsCall, true, errorOrInternal(d.Error, d.TaskID))}, nil
	case modern.StatusInputRequired:
		var keys []string
		for k := range d.InputRequests {
			if !presented[k] {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		return ResultOutcome{Kind: ResultWait, Present: keys}, nil
	}
	return ResultOutcome{Kind: ResultWait}, nil
}

// PayloadToLegacy builds the legacy tasks/result result from the upstream's
// raw result of the original request: every member kept, the modern-only
// resultType dropped, related-task metadata merged into _meta (L-34, L-44).
//
// Implements L-34, L-43, L-44.
func PayloadToLegacy(result []byte, taskID string) (legacy.GetTaskPayloadResult, error) {
	stripped, err := ResultToLegacy(result)
	if err != nil {
		return legacy.GetTaskPayloadResult{}, err
	}
	r, err := legacy.NewGetTaskPayloadResult(stripped, taskID)
	if err != nil {
		return legacy.GetTaskPayloadResult{}, upstreamErr("result", err)
	}
	return r, nil
}

// ResultToLegacy drops the 2026-only members of an upstream result that mean
// nothing to a legacy client (resultType, and the CacheableResult pair ttlMs /
// cacheScope) and keeps every other member as it came. Use it for plain
// results of forwarded requests (the bridge may strip or keep 2026-only members).
//
// Implements M-04 (the caller has classified the result as "complete").
func ResultToLegacy(result []byte) (json.RawMessage, error) {
	o, err := decodeObject(result, "result", false)
	if err != nil {
		return nil, upstreamErr("result", err)
	}
	o = o.Clone()
	o.Del("resultType", "ttlMs", "cacheScope")
	return o.Bytes(), nil
}

// cacheable lists the methods whose 2026-07-28 result is a CacheableResult,
// with ttlMs and cacheScope required.
var cacheable = map[string]bool{
	modern.MethodToolsList: true, modern.MethodPromptsList: true, modern.MethodResourcesList: true,
	modern.MethodResourceTemplates: true, modern.MethodResourcesRead: true, modern.MethodDiscover: true,
}

// ResultToModern makes a legacy upstream's plain result to a forwarded
// request (prompts/get, resources/read, a synchronous tools/call, ...) a
// 2026-07-28 result for a modern client: resultType "complete" (every result
// carries it, M-41; an upstream's own resultType is overwritten — "task" is
// only ever written by CreateTaskResultToModern, M-52); for the
// CacheableResult methods (tools/list, prompts/list, resources/list,
// resources/templates/list, resources/read) ttlMs and cacheScope when absent
// (required there; scope "" = "private": the result comes from one
// principal's upstream session); the related-task _meta key, which does not
// exist in the extension, dropped. Every other member is kept byte for byte.
// tools/list has its own ToolsListToModern (it also drops taskSupport).
//
// Implements M-41, M-52.
func ResultToModern(method string, result []byte, ttlMs int64, scope modern.CacheScope) (json.RawMessage, error) {
	o, err := decodeObject(result, method+" result", false)
	if err != nil {
		return nil, upstreamErr(method+" result", err)
	}
	if o, err = withoutMetaKeys(o, method+" result", legacy.RelatedTaskKey); err != nil {
		return nil, upstreamErr(method+" result", err)
	}
	o = o.Clone()
	if err := o.Set("resultType", modern.ResultComplete); err != nil {
		return nil, err
	}
	if cacheable[method] {
		if scope == "" {
			scope = modern.CachePrivate
		}
		if !scope.Valid() {
			return nil, internalErr("cacheScope %q is not public or private", scope)
		}
		if !o.Has("ttlMs") {
			if err := o.Set("ttlMs", max(ttlMs, 0)); err != nil {
				return nil, err
			}
		}
		if !o.Has("cacheScope") {
			if err := o.Set("cacheScope", scope); err != nil {
				return nil, err
			}
		}
	}
	return o.Bytes(), nil
}

// LegacyOutcome is the final outcome of a legacy upstream task, as fetched
// with tasks/result: exactly one of Result (related-task metadata removed)
// and Error.
type LegacyOutcome struct {
	Result json.RawMessage
	Error  *rpc.Error
}

// LegacyOutcomeFromResponse reads the legacy upstream's tasks/result response
// (a whole JSON-RPC response) into a LegacyOutcome. The related-task key is
// removed from the result's _meta (it does not exist in the extension);
// everything else is kept.
//
// Implements L-43 (read side), M-56 (input for DetailedTaskFromLegacy).
func LegacyOutcomeFromResponse(response []byte) (LegacyOutcome, error) {
	resp, err := legacy.DecodeResponse(response)
	if err != nil {
		return LegacyOutcome{}, upstreamErr("tasks/result response", err)
	}
	if resp.Error != nil {
		return LegacyOutcome{Error: resp.Error}, nil
	}
	o, err := decodeObject(resp.Result, "tasks/result result", false)
	if err != nil {
		return LegacyOutcome{}, upstreamErr("tasks/result result", err)
	}
	o, err = withoutMetaKeys(o, "tasks/result result", legacy.RelatedTaskKey)
	if err != nil {
		return LegacyOutcome{}, upstreamErr("tasks/result result", err)
	}
	return LegacyOutcome{Result: o.Bytes()}, nil
}

// NeedsPayload reports whether DetailedTaskFromLegacy needs the task's
// LegacyOutcome (fetched once with the upstream's tasks/result and cached):
// modern tasks/get inlines the result or error of a terminal task.
func NeedsPayload(s legacy.TaskStatus) bool {
	return s == legacy.StatusCompleted || s == legacy.StatusFailed
}

// DetailedTaskFromLegacy builds the modern DetailedTask for a task that lives
// on a legacy upstream, from its legacy tasks/get result (raw), its outcome
// (needed when NeedsPayload; nil otherwise) and the input requests the bridge
// holds for it (side-channel requests received on the upstream's tasks/result
// stream, InputRequestFromLegacy):
//   - legacy failed with an isError:true result → completed with that result:
//     failed is only for JSON-RPC errors (M-56);
//   - failed or completed with a JSON-RPC error → failed with that error, as
//     ErrorToModern maps it (never -32002, -32042 or another code 2026 does
//     not define, M-45), and a statusMessage (M-56);
//   - completed with a result → completed with the result (M-55);
//   - input_required with pending requests → input_required with all of them
//     (M-55); without any yet (the legacy upstream only delivers them on
//     tasks/result) → working, since there is nothing to answer;
//   - working, cancelled → the same status, no payload.
//
// Implements M-45, M-55, M-56.
func DetailedTaskFromLegacy(raw []byte, outcome *LegacyOutcome, pending modern.InputRequests) (modern.DetailedTask, error) {
	g, err := legacy.DecodeGetTaskResult(raw)
	if err != nil {
		return modern.DetailedTask{}, upstreamErr("tasks/get result", err)
	}
	d := modern.DetailedTask{Task: TaskToModern(g.Task)}
	switch g.Task.Status {
	case legacy.StatusCompleted, legacy.StatusFailed:
		if outcome == nil || (outcome.Error == nil && len(outcome.Result) == 0) {
			return modern.DetailedTask{}, internalErr("task %s is %s; its tasks/result payload must be fetched first", g.Task.TaskID, g.Task.Status)
		}
		if outcome.Error != nil {
			d.Status = modern.StatusFailed
			d.Error = ErrorToModern(legacy.MethodToolsCall, outcome.Error)
			if d.StatusMessage == "" {
				d.StatusMessage = truncate(outcome.Error.Message)
			}
		} else {
			if _, err := decodeObject(outcome.Result, "tasks/result result", false); err != nil {
				return modern.DetailedTask{}, upstreamErr("tasks/result result", err)
			}
			d.Status = modern.StatusCompleted
			d.Result = outcome.Result
		}
	case legacy.StatusInputRequired:
		if len(pending) == 0 {
			d.Status = modern.StatusWorking
		} else {
			d.InputRequests = pending
		}
	}
	if err := d.Validate(); err != nil {
		return modern.DetailedTask{}, upstreamErr("task", err)
	}
	return d, nil
}

// GetTaskResultToModern wraps DetailedTaskFromLegacy into the modern tasks/get
// result (resultType "complete", never "task").
//
// Implements M-41, M-52, M-55.
func GetTaskResultToModern(raw []byte, outcome *LegacyOutcome, pending modern.InputRequests) (modern.GetTaskResult, error) {
	d, err := DetailedTaskFromLegacy(raw, outcome, pending)
	if err != nil {
		return modern.GetTaskResult{}, err
	}
	return modern.GetTaskResult{DetailedTask: d}, nil
}

// TaskNotificationToModern builds notifications/tasks params for a modern
// subscriber: the complete DetailedTask, as tasks/get would return it now, and
// the listen stream's subscriptionId (M-63, M-47).
//
// Implements M-63.
func TaskNotificationToModern(d modern.DetailedTask, subscriptionID jsonrpc.ID) (modern.TaskStatusNotificationParams, error) {
	if !subscriptionID.IsValid() {
		return modern.TaskStatusNotificationParams{}, internalErr("notifications/tasks needs the listen request's id as subscriptionId")
	}
	if err := d.Validate(); err != nil {
		return modern.TaskStatusNotificationParams{}, internalErr("notifications/tasks: %s", rpc.As(err).Message)
	}
	return modern.TaskStatusNotificationParams{DetailedTask: d, SubscriptionID: subscriptionID}, nil
}
