package translate

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// TaskToLegacy converts the base Task shape: ttlMs → ttl (null stays null,
// the key is never dropped), pollIntervalMs → pollInterval, statusMessage
// verbatim, timestamps as timestamp() passes them, status copied as is (status semantics are applied
// by LegacyTaskFromDetailed). A negative ttlMs becomes 0 and a zero or
// negative pollIntervalMs is dropped (validate defensively, M-24), so the result always passes legacy.Task.Validate when the
// timestamps are ISO 8601.
//
// Implements L-18, L-19, L-21, L-22 (ttl → ttlMs, pollInterval →
// pollIntervalMs).
func TaskToLegacy(t modern.Task) legacy.Task {
	out := legacy.Task{
		TaskID:        t.TaskID,
		Status:        legacy.TaskStatus(t.Status),
		StatusMessage: t.StatusMessage,
		CreatedAt:     timestamp(t.CreatedAt),
		LastUpdatedAt: timestamp(t.LastUpdatedAt),
	}
	if t.TTLMs != nil {
		out.TTL = legacy.Millis(max(*t.TTLMs, 0))
	}
	if t.PollIntervalMs != nil && *t.PollIntervalMs > 0 {
		out.PollInterval = legacy.Millis(*t.PollIntervalMs)
	}
	return out
}

// maxSafeInt is 2^53-1, the bound the ext-tasks schema puts on ttlMs and
// pollIntervalMs (@format int): JavaScript peers cannot hold more.
const maxSafeInt = 1<<53 - 1

// TaskToModern converts the base Task shape the other way: ttl → ttlMs,
// pollInterval → pollIntervalMs, timestamps as timestamp() passes them,
// everything else verbatim. A legacy ttl or
// pollInterval beyond 2^53-1 (the legacy schema sets no bound; its decoder
// clamps huge values to math.MaxInt64) is clamped to 2^53-1 — about 285,000
// years — so the task stays usable instead of failing the strict encoder.
//
// Implements the field renames (ttl → ttlMs, pollInterval → pollIntervalMs)
// for the modern face (M-55).
func TaskToModern(t legacy.Task) modern.Task {
	out := modern.Task{
		TaskID:        t.TaskID,
		Status:        modern.TaskStatus(t.Status),
		StatusMessage: t.StatusMessage,
		CreatedAt:     timestamp(t.CreatedAt),
		LastUpdatedAt: timestamp(t.LastUpdatedAt),
	}
	if t.TTL != nil {
		out.TTLMs = modern.Int64(min(*t.TTL, maxSafeInt))
	}
	if t.PollInterval != nil {
		out.PollIntervalMs = modern.Int64(min(*t.PollInterval, maxSafeInt))
	}
	return out
}

// timestamp passes a createdAt/lastUpdatedAt on to the other era. An RFC 3339
// timestamp (the profile of ISO 8601 both specifications link) goes verbatim:
// the instant and its spelling are preserved. Other forms a peer may send and
// legacy.ParseTime reads leniently — a space instead of "T", lower-case "t"/"z",
// "+0000" offsets, a comma decimal, missing seconds or zone, a bare date — are
// rewritten as RFC 3339 in UTC ("…Z", milliseconds, more digits only when
// they matter), because a client of the other era may not read them (a
// JavaScript Date reads "2025-11-25 10:30:00" as local time). An unreadable
// value stays as it is (the legacy encoder then refuses it: -32603).
func timestamp(s string) string {
	// time.Parse also takes a comma decimal, which RFC 3339 does not.
	if _, err := time.Parse(time.RFC3339Nano, s); err == nil && !strings.ContainsRune(s, ',') {
		return s
	}
	t, err := legacy.ParseTime(s)
	if err != nil {
		return s
	}
	if t.Nanosecond()%int(time.Millisecond) == 0 {
		return legacy.FormatTime(t)
	}
	return legacy.FormatTimeNano(t)
}

// CreateOptions tunes the legacy CreateTaskResult.
type CreateOptions struct {
	// ImmediateResponse, when set, goes to
	// _meta["io.modelcontextprotocol/model-immediate-response"] (L-23).
	ImmediateResponse string
}

// CreateTaskResultToLegacy turns an upstream flat CreateTaskResult
// ({"resultType":"task", taskId, ...}) into the legacy nested one
// ({"task": {...}}). The legacy task always reports status working
// (L-17; the extension says a task only "typically" starts working);
// when the upstream seeded another status its statusMessage is dropped with
// it, and the real status shows on the next tasks/get. resultType and the
// upstream's _meta (serverInfo) are not carried over; related-task metadata is
// never added (L-35: not on creation and status results).
//
// Implements L-12, L-14, L-17, L-18, L-19, L-21, L-22, L-23.
func CreateTaskResultToLegacy(raw []byte, opts CreateOptions) (legacy.CreateTaskResult, error) {
	c, err := modern.DecodeCreateTaskResult(raw)
	if err != nil {
		return legacy.CreateTaskResult{}, upstreamErr("CreateTaskResult", err)
	}
	return LegacyCreateTaskResult(c.Task, opts)
}

// LegacyCreateTaskResult builds the legacy CreateTaskResult for a task the
// bridge holds as a modern Task: an upstream task, or one synthesized by
// SynthesizeTask for a synchronous answer. Status is always working (L-17).
//
// Implements L-12, L-17, L-21, L-23.
func LegacyCreateTaskResult(t modern.Task, opts CreateOptions) (legacy.CreateTaskResult, error) {
	lt := TaskToLegacy(t)
	if lt.Status != legacy.StatusWorking {
		lt.Status = legacy.StatusWorking
		lt.StatusMessage = ""
	}
	if err := lt.Validate(); err != nil {
		return legacy.CreateTaskResult{}, upstreamErr("task", err)
	}
	res := legacy.CreateTaskResult{Task: lt}
	if opts.ImmediateResponse != "" {
		res.Meta.SetModelImmediateResponse(opts.ImmediateResponse)
	}
	return res, nil
}

// CreateTaskResultToModern turns a legacy nested CreateTaskResult (from a
// legacy upstream) into the flat modern one with resultType "task". Other
// _meta keys (model-immediate-response, vendor keys) are kept; the
// related-task key, which does not exist in the extension, is dropped.
//
// Implements M-41, M-52 (resultType "task" only here), M-68.
func CreateTaskResultToModern(raw []byte) (modern.CreateTaskResult, error) {
	c, err := legacy.DecodeCreateTaskResult(raw)
	if err != nil {
		return modern.CreateTaskResult{}, upstreamErr("CreateTaskResult", err)
	}
	return CreatedToModern(c)
}

// CreatedToModern is CreateTaskResultToModern of a CreateTaskResult already
// decoded (legacy.ParseCreated).
//
// Implements M-52.
func CreatedToModern(c legacy.CreateTaskResult) (modern.CreateTaskResult, error) {
	out := modern.CreateTaskResult{Task: TaskToModern(c.Task)}
	for k, v := range c.Meta {
		if k == legacy.RelatedTaskKey {
			continue
		}
		if out.Meta == nil {
			out.Meta = modern.Object{}
		}
		out.Meta[k] = v
	}
	if err := out.Task.Validate(); err != nil {
		return modern.CreateTaskResult{}, upstreamErr("task", err)
	}
	return out, nil
}

// SynthesizeTask builds the local task the bridge creates when a legacy client
// asked for a task but the upstream answered synchronously (L-12:
// "receivers that accept a task-augmented request MUST return a
// CreateTaskResult"): already completed, holding result. taskID must be a
// fresh unguessable id (L-70, minted by the face). ttl is the retention the
// bridge grants (the requested one clamped to maxTTL when maxTTL > 0, L-20,
// L-74; nil = unlimited).
//
// Implements L-12 (with LegacyCreateTaskResult), L-20, L-74.
func SynthesizeTask(taskID string, result []byte, clock Clock, requestedTTL *int64, maxTTL int64, pollInterval *int64) (modern.DetailedTask, error) {
	if taskID == "" {
		return modern.DetailedTask{}, internalErr("SynthesizeTask: empty task id")
	}
	o, err := decodeObject(result, "tools/call result", false)
	if err != nil {
		return modern.DetailedTask{}, upstreamErr("tools/call result", err)
	}
	now := modern.FormatTime(clock.Now())
	d := modern.DetailedTask{
		Task: modern.Task{
			TaskID: taskID, Status: modern.StatusCompleted,
			CreatedAt: now, LastUpdatedAt: now,
			TTLMs: clampTTL(requestedTTL, maxTTL), PollIntervalMs: pollInterval,
		},
		Result: o.Bytes(),
	}
	return d, nil
}

// clampTTL applies the bridge's maximum retention: nil (unlimited) or a value
// above maxTTL becomes maxTTL when maxTTL > 0 (L-74).
func clampTTL(requested *int64, maxTTL int64) *int64 {
	if maxTTL <= 0 {
		if requested == nil {
			return nil
		}
		return modern.Int64(max(*requested, 0))
	}
	if requested == nil || *requested > maxTTL {
		return modern.Int64(maxTTL)
	}
	return modern.Int64(max(*requested, 0))
}

// maxStatusMessage bounds a statusMessage copied from a tool's output.
const maxStatusMessage = 1024

// LegacyTaskFromDetailed applies the legacy status semantics (L-29, L-30) to
// one snapshot of an upstream task and returns the legacy Task a legacy client
// sees (tasks/get, tasks/list, status notifications):
//   - completed with result.isError:true → failed, with statusMessage copied
//     from the first text content of the result (TS clients see a failed task
//     only through statusMessage, L-31), else the upstream's
//     statusMessage, else "Tool execution failed";
//   - failed (a JSON-RPC error) → failed, with the upstream statusMessage or
//     the error's message as diagnostics;
//   - every other status verbatim (input_required stays input_required).
//
// The payload (result, error, inputRequests) is stripped and no related-task
// metadata is added. A pinned cancel is applied by MergeLegacyTask, not here.
//
// Implements L-27, L-29, L-30, L-31, L-35, L-39.
func LegacyTaskFromDetailed(d modern.DetailedTask) legacy.Task {
	t := TaskToLegacy(d.Task)
	switch d.Status {
	case modern.StatusCompleted:
		if d.ResultIsError() {
			t.Status = legacy.StatusFailed
			if msg := firstText(d.Result); msg != "" {
				t.StatusMessage = msg
			} else if t.StatusMessage == "" {
				t.StatusMessage = "Tool execution failed"
			}
		}
	case modern.StatusFailed:
		if t.StatusMessage == "" && d.Error != nil {
			t.StatusMessage = truncate(d.Error.Message)
		}
		if t.StatusMessage == "" {
			t.StatusMessage = "Task failed"
		}
	}
	return t
}

// GetTaskResultToLegacy converts an upstream tasks/get result (Result &
// DetailedTask, resultType "complete") into the legacy tasks/get result: the
// flat Task with the status semantics of LegacyTaskFromDetailed, without
// payload and without _meta.
//
// Implements L-18, L-19, L-21, L-29, L-30, L-31, L-35, L-39.
func GetTaskResultToLegacy(raw []byte) (legacy.GetTaskResult, error) {
	g, err := modern.DecodeGetTaskResult(raw)
	if err != nil {
		return legacy.GetTaskResult{}, upstreamErr("tasks/get result", err)
	}
	t := LegacyTaskFromDetailed(g.DetailedTask)
	if err := t.Validate(); err != nil {
		return legacy.GetTaskResult{}, upstreamErr("task", err)
	}
	return legacy.GetTaskResult{Task: t}, nil
}

// StatusNotificationToLegacy converts upstream notifications/tasks params
// (a DetailedTask plus _meta.subscriptionId) into legacy
// notifications/tasks/status params: the full legacy Task (ttl included),
// status semantics applied, no subscriptionId and no related-task metadata.
//
// Implements L-36, L-61.
func StatusNotificationToLegacy(params []byte) (legacy.TaskStatusNotificationParams, error) {
	n, err := modern.DecodeTaskStatusNotificationParams(params)
	if err != nil {
		return legacy.TaskStatusNotificationParams{}, upstreamErr("notifications/tasks params", err)
	}
	t := LegacyTaskFromDetailed(n.DetailedTask)
	if err := t.Validate(); err != nil {
		return legacy.TaskStatusNotificationParams{}, upstreamErr("task", err)
	}
	return legacy.TaskStatusNotificationParams{Task: t}, nil
}

// firstText returns the text of the first content block of type "text" of a
// CallToolResult, bounded in length; "" when there is none.
func firstText(result json.RawMessage) string {
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(result, &r) != nil {
		return ""
	}
	for _, c := range r.Content {
		if c.Type == "text" && strings.TrimSpace(c.Text) != "" {
			return truncate(strings.TrimSpace(c.Text))
		}
	}
	return ""
}

func truncate(s string) string {
	if len(s) <= maxStatusMessage {
		return s
	}
	cut := maxStatusMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// errorOrInternal returns e, or a -32603 saying the upstream's failed task
// carried no error (a lenient decode tolerates that; the client still needs
// an answer).
func errorOrInternal(e *rpc.Error, taskID string) *rpc.Error {
	if e != nil {
		return e
	}
	return internalErr("task %s failed upstream without a JSON-RPC error", taskID)
}
