// Package catalog is the library API table of the rules (docs/rules) as
// data: every identifier of mcp-go, mcpkit, finemcp, apptheory and tmc/mcp
// that migrate-check reports or counts as legacy task-engine use, keyed by
// (family, sub-package, object key).
package catalog

import (
	"go/types"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/finding"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/libs"
	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// Entry is one identifier of the library API table.
type Entry struct {
	Family string // settings.Family*
	Pkg    string // package path below the family's prefix ("mcp", "server", "" for the root)
	Name   string // object key: "MethodTasksResult", "Client.TaskResult", "Task.TTL"
	// Rule is the reported rule; "" means the identifier is not reported on
	// its own but counts as legacy task-engine use for MCP014.
	Rule   string
	Level  rules.Severity // "" = the rule's default
	Side   finding.Side   // peer role; fields of MCP005 entries are decided per use
	Engine bool           // evidence of a 2025-11-25 task engine (MCP014)
	What   string         // what the identifier is, completing "<lib> <pkg.Name> …"
	Do     string         // overrides the rule's guidance when set
}

// ID is the entry's stable identity, e.g. "mcpgo:mcp.Task.TTL".
func (e Entry) ID() string {
	p := e.Pkg
	if p == "" {
		p = "."
	}
	return e.Family + ":" + p + "." + e.Name
}

type group struct {
	fam, pkg, rule string
	level          rules.Severity
	side           finding.Side
	engine         bool
	what, do       string
	names          []string
}

const (
	mcpgo     = settings.FamilyMCPGo
	mcpkit    = settings.FamilyMCPKit
	finemcp   = settings.FamilyFineMCP
	apptheory = settings.FamilyAppTheory
	tmc       = settings.FamilyTMC
	server    = finding.SideServer
	client    = finding.SideClient
)

// groups is the catalogue. Identifiers the catalogue says not to flag
// (mcp.MethodTasksGet/Cancel, NewTask, TaskStatus*, Hooks.*GetTask/CancelTask,
// mcpkit core.ToolExecution/TaskSupport*, …) are deliberately absent.
var groups = []group{
	// ---- github.com/mark3labs/mcp-go ----
	{fam: mcpgo, pkg: "mcp", rule: "MCP001", what: `names the removed method "tasks/result" (peers answer -32601)`, names: []string{"MethodTasksResult"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP002", what: `names the removed method "tasks/list"`, names: []string{"MethodTasksList"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP003", what: `names the legacy notification "notifications/tasks/status"`,
		do:    `the extension sends "notifications/tasks" only for task IDs the client subscribed to with subscriptions/listen, and mcp-go has no constant for it`,
		names: []string{"MethodNotificationTasksStatus"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP001", what: "belongs to the removed tasks/result method",
		names: []string{"TaskResultRequest", "TaskResultParams", "TaskResultResult", "ParseTaskResultResult"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP002", what: "belongs to the removed tasks/list method",
		names: []string{"ListTasksRequest", "ListTasksResult", "NewListTasksResult", "ParseListTasksResult"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP002", what: "exists to paginate the removed tasks/list method", names: []string{"Task.GetName"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP003", what: "builds the legacy notifications/tasks/status notification",
		names: []string{"TaskStatusNotification", "TaskStatusNotificationParams", "NewTaskStatusNotification"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP004", what: "is the legacy capabilities.tasks declaration",
		names: []string{"TasksCapability", "TasksCapability.List", "TasksCapability.Cancel", "TasksCapability.Requests",
			"TaskRequestsCapability", "TaskRequestsCapability.Tools", "NewTasksCapability", "NewTasksCapabilityWithToolsOnly"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP013", what: "declares client-hosted task-augmented sampling/elicitation",
		names: []string{"TaskRequestsCapability.Sampling", "TaskRequestsCapability.Elicitation"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP004", side: server, what: "is the legacy capabilities.tasks slot", names: []string{"ServerCapabilities.Tasks"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP004", side: client, what: "is the legacy capabilities.tasks slot", names: []string{"ClientCapabilities.Tasks"}},
	{fam: mcpgo, pkg: "server", rule: "MCP004", side: server, engine: true,
		what: "enables mcp-go's 2025-11-25 task engine and declares capabilities.tasks", names: []string{"WithTaskCapabilities"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP005", side: client, what: "is the removed per-request params.task",
		names: []string{"CallToolParams.Task", "TaskParams", "TaskParams.TTL", "NewTaskParams"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP009", what: "declares the removed tool execution.taskSupport",
		names: []string{"Tool.Execution", "ToolExecution", "ToolExecution.TaskSupport", "TaskSupport",
			"TaskSupportForbidden", "TaskSupportOptional", "TaskSupportRequired", "WithTaskSupport"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP006", what: `is the legacy Task field "ttl"`,
		do:    `the extension's wire field is "ttlMs" (integer milliseconds, nullable, required) and mcp-go has no field for it`,
		names: []string{"Task.TTL", "WithTaskTTL"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP007", what: `is the legacy Task field "pollInterval"`,
		do:    `the extension's wire field is "pollIntervalMs", which mcp-go does not decode`,
		names: []string{"Task.PollInterval", "WithTaskPollInterval"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP008", what: "is the nested 2025-11-25 CreateTaskResult {task: Task}",
		names: []string{"CreateTaskResult", "CreateTaskResult.Task", "CreateTaskResult.Content", "CreateTaskResult.IsError",
			"CreateTaskResult.StructuredContent", "NewCreateTaskResult"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP012", what: "is the legacy tasks/cancel result that carries the Task",
		names: []string{"CancelTaskResult", "NewCancelTaskResult", "ParseCancelTaskResult"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP015", what: "is the legacy tasks/get result (a bare Task)",
		do:    `tasks/get now returns a DetailedTask that inlines "result", "error" and "inputRequests" (resultType "complete"); mcp-go's GetTaskResult has no fields for them`,
		names: []string{"GetTaskResult", "ParseGetTaskResult", "NewGetTaskResult"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP011", what: `is the legacy _meta key "io.modelcontextprotocol/related-task"`,
		names: []string{"RelatedTaskMetaKey", "RelatedTaskMeta", "WithRelatedTask"}},
	{fam: mcpgo, pkg: "mcp", rule: "MCP011", what: `is the legacy _meta key "io.modelcontextprotocol/model-immediate-response"`,
		names: []string{"ModelImmediateResponseMetaKey", "WithModelImmediateResponse"}},
	{fam: mcpgo, pkg: "server", rule: "MCP008", side: server, engine: true,
		what:  "registers a tool on mcp-go's 2025-11-25 task engine (nested CreateTaskResult, taskSupport \"required\")",
		do:    `the extension returns a flat task result (resultType "task") and removed taskSupport; mcp-go has no engine for it yet`,
		names: []string{"MCPServer.AddTaskTool", "MCPServer.AddTaskTools", "TaskToolHandlerFunc", "ServerTaskTool"}},
	{fam: mcpgo, pkg: "server", engine: true, what: "configures mcp-go's 2025-11-25 task engine",
		names: []string{"WithMaxConcurrentTasks", "WithTaskHooks", "TaskHooks", "TaskHooks.AddOnTaskCreated",
			"TaskHooks.AddOnTaskCompleted", "TaskHooks.AddOnTaskFailed", "TaskHooks.AddOnTaskCancelled",
			"TaskHooks.AddOnTaskStatusChanged", "TaskMetrics", "OnTaskCreatedHookFunc", "OnTaskCompletedHookFunc",
			"OnTaskFailedHookFunc", "OnTaskCancelledHookFunc", "OnTaskStatusChangedHookFunc"}},
	{fam: mcpgo, pkg: "server", rule: "MCP001", side: server, engine: true, what: "hooks the removed tasks/result method",
		names: []string{"Hooks.AddBeforeTaskResult", "Hooks.AddAfterTaskResult", "OnBeforeTaskResultFunc",
			"OnAfterTaskResultFunc", "Hooks.OnBeforeTaskResult", "Hooks.OnAfterTaskResult"}},
	{fam: mcpgo, pkg: "server", rule: "MCP002", side: server, engine: true, what: "hooks the removed tasks/list method",
		names: []string{"Hooks.AddBeforeListTasks", "Hooks.AddAfterListTasks", "OnBeforeListTasksFunc",
			"OnAfterListTasksFunc", "Hooks.OnBeforeListTasks", "Hooks.OnAfterListTasks"}},
	{fam: mcpgo, pkg: "client", rule: "MCP001", side: client, what: "calls the removed tasks/result method (peers answer -32601)",
		names: []string{"Client.TaskResult"}},
	{fam: mcpgo, pkg: "client", rule: "MCP002", side: client, what: "calls the removed tasks/list method",
		names: []string{"Client.ListTasks", "Client.ListTasksByPage", "ErrRepeatedTaskListCursor"}},
	{fam: mcpgo, pkg: "client", rule: "MCP012", side: client, what: "expects tasks/cancel to return the Task", names: []string{"Client.CancelTask"}},
	{fam: mcpgo, pkg: "client", rule: "MCP007", level: rules.Info, side: client, what: "polls with the legacy Task.PollInterval",
		do:    `against a modern server the field is "pollIntervalMs", so the server's interval decodes as nil and the fallback interval is used`,
		names: []string{"Client.WaitForTask", "ErrInvalidFallbackPollInterval", "ErrServerPollIntervalOverflow"}},

	// ---- github.com/panyam/mcpkit, the *V1 API ----
	{fam: mcpkit, pkg: "server", rule: "MCP004", side: server, engine: true, what: "registers mcpkit's 2025-11-25 (V1) task engine",
		do:    `register the extension's engine instead: tasks.Register(tasks.Config{Server: srv}) from github.com/panyam/mcpkit/ext/tasks (a new module requirement)`,
		names: []string{"RegisterTasksV1", "TasksConfigV1"}},
	{fam: mcpkit, pkg: "client", rule: "MCP008", side: client, what: "calls a tool as a legacy task (nested CreateTaskResultV1)",
		do:    `use client.ToolCall and res.IsTask(): the extension's task result is flat`,
		names: []string{"ToolCallAsTaskV1"}},
	{fam: mcpkit, pkg: "client", rule: "MCP005", side: client, what: "sets the removed per-request params.task", names: []string{"TaskCallOptionsV1"}},
	{fam: mcpkit, pkg: "client", rule: "MCP015", side: client, what: "calls tasks/get and returns its legacy result (a bare Task)",
		do: `client.GetTask returns the extension's DetailedTask with the inlined result`, names: []string{"GetTaskV1"}},
	{fam: mcpkit, pkg: "client", rule: "MCP012", side: client, what: "expects tasks/cancel to return the Task",
		do: `client.CancelTask(ctx, c, id) returns only an error`, names: []string{"CancelTaskV1"}},
	{fam: mcpkit, pkg: "client", rule: "MCP001", side: client, what: "uses the removed tasks/result method",
		do: `poll with client.WaitForTask(ctx, c, id, ...) / client.GetTask and read the inlined result`, names: []string{"WaitForTaskV1", "GetTaskPayloadV1"}},
	{fam: mcpkit, pkg: "client", rule: "MCP002", side: client, what: "calls the removed tasks/list method", names: []string{"ListTasksV1"}},
	{fam: mcpkit, pkg: "core", rule: "MCP006", what: `is the legacy Task field "ttl"`, do: `core.TaskInfoV2.TTLMs carries "ttlMs"`, names: []string{"TaskInfo.TTL"}},
	{fam: mcpkit, pkg: "core", rule: "MCP007", what: `is the legacy Task field "pollInterval"`, do: `core.TaskInfoV2.PollIntervalMs carries "pollIntervalMs"`, names: []string{"TaskInfo.PollInterval"}},
	{fam: mcpkit, pkg: "core", rule: "MCP008", level: rules.Info, what: `is the legacy Task field "parentTaskId"`,
		do: `the extension's Task has no parentTaskId`, names: []string{"TaskInfo.ParentTaskID"}},
	{fam: mcpkit, pkg: "core", rule: "MCP008", what: "is the nested 2025-11-25 CreateTaskResult {task: Task}",
		do: `core.CreateTaskResult is the flat extension shape (resultType "task")`, names: []string{"CreateTaskResultV1"}},
	{fam: mcpkit, pkg: "core", rule: "MCP015", what: "is the legacy tasks/get result",
		do: `the extension's tasks/get returns core.DetailedTask`, names: []string{"GetTaskResultV1"}},
	{fam: mcpkit, pkg: "core", rule: "MCP012", what: "is the legacy tasks/cancel result that carries the Task", names: []string{"CancelTaskResultV1"}},
	{fam: mcpkit, pkg: "core", rule: "MCP002", what: "belongs to the removed tasks/list method", names: []string{"ListTasksResultV1"}},
	{fam: mcpkit, pkg: "core", rule: "MCP004", what: "is the legacy capabilities.tasks declaration",
		do:    `the extension is core.TasksExtensionID; check it with core.ClientSupportsTasks(ctx)`,
		names: []string{"TasksCap", "ClientTasksCap", "TasksCapMethod", "TasksCapRequests", "TasksCapToolsMethods", "ClientSupportsTasksV1"}},
	{fam: mcpkit, pkg: "core", rule: "MCP013", what: "declares client-hosted task-augmented sampling/elicitation",
		names: []string{"TasksCapSamplingMethods", "TasksCapElicitationMethods"}},
	{fam: mcpkit, pkg: "core", rule: "MCP004", side: server, what: "is the legacy capabilities.tasks slot", names: []string{"ServerCapabilities.Tasks"}},
	{fam: mcpkit, pkg: "core", rule: "MCP004", side: client, what: "is the legacy capabilities.tasks slot", names: []string{"ClientCapabilities.Tasks"}},

	// ---- github.com/finemcp/finemcp ----
	{fam: finemcp, rule: "MCP001", what: `names the removed method "tasks/result" (peers answer -32601)`, names: []string{"MethodTasksResult"}},
	{fam: finemcp, rule: "MCP002", what: `names the removed method "tasks/list"`, names: []string{"MethodTasksList"}},
	{fam: finemcp, rule: "MCP004", side: server, what: "is the legacy capabilities.tasks slot", names: []string{"ServerCapabilities.Tasks"}},
	{fam: finemcp, rule: "MCP004", what: "is the legacy capabilities.tasks declaration",
		names: []string{"TaskCapability", "TaskRequestsCapability", "TaskToolsCapability"}},
	{fam: finemcp, rule: "MCP005", side: client, what: "is the removed per-request params.task",
		names: []string{"CallToolParams.Task", "TaskMetadata", "TaskMetadata.TTL"}},
	{fam: finemcp, rule: "MCP006", what: `is the legacy Task field "ttl"`, names: []string{"Task.TTL"}},
	{fam: finemcp, rule: "MCP007", what: `is the legacy Task field "pollInterval"`, names: []string{"Task.PollInterval"}},
	{fam: finemcp, rule: "MCP008", what: "is the nested 2025-11-25 CreateTaskResult {task: Task}",
		names: []string{"CreateTaskResult", "CreateTaskResult.Task"}},
	{fam: finemcp, rule: "MCP002", what: "belongs to the removed tasks/list method",
		names: []string{"ListTasksResult", "TaskStore.List", "TaskStore.ListByOwner"}},
	{fam: finemcp, rule: "MCP001", side: server, engine: true, what: "serves the removed tasks/result method", names: []string{"TaskStore.GetResult"}},
	{fam: finemcp, engine: true, what: "configures finemcp's 2025-11-25 task engine",
		names: []string{"TaskStore", "NewTaskStore", "WithTaskStore", "WithMaxTasks", "TaskOptions"}},
	{fam: finemcp, pkg: "client", rule: "MCP001", side: client, what: "calls the removed tasks/result method (peers answer -32601)",
		names: []string{"Client.GetTaskResult", "LoadBalancer.GetTaskResult"}},
	{fam: finemcp, pkg: "client", rule: "MCP002", side: client, what: "calls the removed tasks/list method",
		names: []string{"Client.ListTasks", "Client.IterateTasks", "TasksIterator", "LoadBalancer.ListTasks"}},
	{fam: finemcp, pkg: "client", rule: "MCP012", side: client, what: "expects tasks/cancel to return the Task",
		names: []string{"Client.CancelTask", "LoadBalancer.CancelTask"}},

	// ---- github.com/theory-cloud/apptheory runtime/mcp ----
	{fam: apptheory, pkg: "runtime/mcp", rule: "MCP006", what: `is the legacy Task field "ttl"`, names: []string{"Task.TTL"}},
	{fam: apptheory, pkg: "runtime/mcp", rule: "MCP007", what: `is the legacy Task field "pollInterval"`, names: []string{"Task.PollInterval", "TaskRuntimeOptions.PollInterval"}},
	{fam: apptheory, pkg: "runtime/mcp", rule: "MCP005", side: client, what: "is the removed per-request params.task", names: []string{"TaskMetadata", "TaskMetadata.TTL"}},
	{fam: apptheory, pkg: "runtime/mcp", rule: "MCP008", what: "is the nested 2025-11-25 CreateTaskResult {task: Task}", names: []string{"CreateTaskResult", "CreateTaskResult.Task"}},
	{fam: apptheory, pkg: "runtime/mcp", rule: "MCP009", what: "declares the removed tool execution.taskSupport", names: []string{"ToolExecution.TaskSupport"}},
	{fam: apptheory, pkg: "runtime/mcp", rule: "MCP004", side: server, engine: true,
		what: "enables apptheory's 2025-11-25 task runtime (negotiated only for 2025-11-25 sessions)", names: []string{"WithTaskRuntime", "CapabilityConfig.Tasks"}},
	{fam: apptheory, pkg: "runtime/mcp", rule: "MCP002", what: "belongs to the removed tasks/list method",
		names: []string{"TaskListRequest", "TaskListResult", "TaskRuntimeOptions.ListLimit"}},
	{fam: apptheory, pkg: "runtime/mcp", rule: "MCP011", what: `sets the legacy _meta key "io.modelcontextprotocol/model-immediate-response"`,
		names: []string{"TaskRuntimeOptions.ModelImmediateResponse"}},
	{fam: apptheory, pkg: "runtime/mcp", engine: true, what: "configures apptheory's 2025-11-25 task runtime",
		names: []string{"TaskStore", "NewDynamoTaskStore", "NewMemoryTaskStore", "TaskRuntimeOptions"}},

	// ---- github.com/tmc/mcp ----
	{fam: tmc, rule: "MCP001", what: `names the removed method "tasks/result" (peers answer -32601)`, names: []string{"MethodTasksResult"}},
	{fam: tmc, rule: "MCP002", what: `names the removed method "tasks/list"`, names: []string{"MethodTasksList"}},
	{fam: tmc, rule: "MCP003", what: `names the legacy notification "notifications/tasks/status"`, names: []string{"MethodTasksStatus"}},
	{fam: tmc, rule: "MCP002", what: "belongs to the removed tasks/list method", names: []string{"ListTasksRequest", "ListTasksResult"}},
	{fam: tmc, rule: "MCP006", what: `is the legacy Task field "ttl"`, names: []string{"TaskInfo.TTL"}},
	{fam: tmc, rule: "MCP007", what: `is the legacy Task field "pollInterval"`, names: []string{"TaskInfo.PollInterval"}},
	{fam: tmc, rule: "MCP004", side: server, what: "is the legacy capabilities.tasks slot", names: []string{"ServerCapabilities.Tasks"}},
	{fam: tmc, rule: "MCP004", side: client, what: "is the legacy capabilities.tasks slot", names: []string{"ClientCapabilities.Tasks"}},
}

// RuleDo is the default guidance per rule.
var RuleDo = map[string]string{
	"MCP001": `poll tasks/get until the task is terminal; a completed task inlines "result", a failed one "error"`,
	"MCP002": `there is no replacement (no scoping is possible without sessions); keep the IDs of the tasks you created`,
	"MCP003": `the extension sends "notifications/tasks" only for task IDs the client subscribed to with subscriptions/listen`,
	"MCP004": `the extension is declared as capabilities.extensions["io.modelcontextprotocol/tasks"] (servers in server/discover, clients per request)`,
	"MCP005": `servers must ignore it; the server decides per request and the client only declares the extension`,
	"MCP006": `the extension's wire field is "ttlMs" (integer milliseconds, nullable, required)`,
	"MCP007": `the extension's wire field is "pollIntervalMs"`,
	"MCP008": `the extension's CreateTaskResult is flat: the Task fields merged into the result, discriminated by resultType "task"`,
	"MCP009": `a tool that can only run as a task must answer -32021 to clients without the extension; deleting the declaration changes behaviour for 2025-11-25 clients`,
	"MCP011": `the 2026-07-28 schema has no such key; drop it or keep it only on 2025-11-25 paths`,
	"MCP012": `tasks/cancel now returns an empty acknowledgement; read the status with the next tasks/get`,
	"MCP013": `the extension has no client-hosted tasks (SEP-2260 forbids unsolicited server-to-client requests)`,
}

// Table returns every catalogue entry, in catalogue order.
func Table() []Entry {
	var out []Entry
	for _, g := range groups {
		for _, n := range g.names {
			out = append(out, Entry{Family: g.fam, Pkg: g.pkg, Name: n, Rule: g.rule, Level: g.level,
				Side: g.side, Engine: g.engine, What: g.what, Do: g.do})
		}
	}
	return out
}

type tableKey struct{ family, pkg, name string }

var index = func() map[tableKey]Entry {
	m := map[tableKey]Entry{}
	for _, e := range Table() {
		k := tableKey{e.Family, e.Pkg, e.Name}
		if _, dup := m[k]; dup {
			panic("catalog: duplicate catalogue entry " + e.ID())
		}
		m[k] = e
	}
	return m
}()

// Lookup finds the entry for an object key in a family sub-package.
func Lookup(family, pkg, name string) (Entry, bool) {
	e, ok := index[tableKey{family, pkg, name}]
	return e, ok
}

// Resolve finds the catalogue entry for a used object (through type
// aliases), if its package belongs to a configured library family.
func Resolve(cfg *settings.Snapshot, k *libs.Keyer, obj types.Object) (Entry, bool) {
	obj = libs.Target(obj)
	if obj == nil || obj.Pkg() == nil {
		return Entry{}, false
	}
	fam, sub, ok := k.Match(cfg, obj.Pkg())
	if !ok {
		return Entry{}, false
	}
	key := k.Key(obj)
	if key == "" {
		return Entry{}, false
	}
	return Lookup(fam, sub, key)
}
