// Package rules is migrate-check's rule catalogue as data: one Rule per check
// (MCP001–MCP015) plus the MCP000 pseudo-rule for malformed or unused
// suppression directives. Drivers use it for -list-rules, -explain, SARIF rule
// metadata and default severities; the analyzers use it for diagnostic URLs.
package rules

import "strings"

// Severity is a rule's default level. Drivers map it to exit codes and SARIF
// levels ("info" becomes SARIF "note").
type Severity string

// Severities, from most to least severe.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Valid reports whether s is one of the three known severities.
func (s Severity) Valid() bool { return s == Error || s == Warning || s == Info }

// Rank orders severities: error 3, warning 2, info 1, anything else 0.
func (s Severity) Rank() int {
	switch s {
	case Error:
		return 3
	case Warning:
		return 2
	case Info:
		return 1
	}
	return 0
}

// Fix policies (Rule.Fix).
const (
	FixNone  = "none"   // never a SuggestedFix
	FixOptIn = "opt-in" // a fix exists but is attached only when FixFlag is set
)

// Rule describes one check.
type Rule struct {
	ID       string   // "MCP001"; also the diagnostic Category
	Name     string   // short kebab-case name, e.g. "tasks-result"
	Title    string   // one line, used as SARIF shortDescription
	Summary  string   // a paragraph: what changed and what to do
	Spec     string   // spec section link(s), "; "-separated
	HelpURI  string   // rule page, also the diagnostic URL
	Before   string   // legacy Go code (for -explain)
	After    string   // migrated Go code (for -explain)
	Severity Severity // default severity
	Fix      string   // FixNone or FixOptIn
	// FixFlag names the boolean flag of the "migratecheck" analyzer that opts
	// into this rule's fix ("fix-tags" → -migratecheck.fix-tags); empty when
	// Fix is FixNone.
	FixFlag string
}

// DirectiveID is the category of diagnostics about suppression directives
// themselves (missing reason, unknown rule, unused directive).
const DirectiveID = "MCP000"

const (
	helpBase  = "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/"
	sep2663   = "https://modelcontextprotocol.io/seps/2663-tasks-extension"
	extSpec   = "https://github.com/modelcontextprotocol/ext-tasks/blob/main/specification/draft/tasks.md"
	legacy    = "https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/tasks"
	changelog = "https://modelcontextprotocol.io/specification/2026-07-28/changelog"
)

func uri(id string) string { return helpBase + id + ".md" }

var directive = Rule{
	ID:       DirectiveID,
	Name:     "directive",
	Title:    "Malformed or unused migrate-check suppression directive",
	Summary:  "A //migrate-check:ignore, //migrate-check:file-ignore or //lint:ignore directive naming MCP rules must give a reason after the rule list, must name known rules, and must suppress at least one finding. Unused directives are reported at warning level so that stale suppressions get removed. This pseudo-rule cannot itself be suppressed or disabled.",
	Spec:     "docs/rules/MCP000.md",
	HelpURI:  uri(DirectiveID),
	Before:   "//migrate-check:ignore MCP001\nres, err := c.TaskResult(ctx, req)",
	After:    "//migrate-check:ignore MCP001 legacy path kept until all peers run 2026-07-28\nres, err := c.TaskResult(ctx, req)",
	Severity: Error,
	Fix:      FixNone,
}

var all = []Rule{
	{
		ID:       "MCP001",
		Name:     "tasks-result",
		Title:    "tasks/result was removed; poll tasks/get and read the inlined result",
		Summary:  "The 2025-11-25 method tasks/result blocked until a task was terminal and then returned the original result. The tasks extension removed it: peers answer -32601 (method not found). Poll tasks/get instead; a completed task inlines result, a failed one inlines error.",
		Spec:     sep2663 + "; " + extSpec + "#tasksget; " + legacy,
		HelpURI:  uri("MCP001"),
		Before:   "res, err := c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: id}})",
		After:    "for {\n\tt, err := getTask(ctx, id) // tasks/get\n\tif err != nil || t.Status.IsTerminal() {\n\t\tbreak // a completed task carries \"result\", a failed one \"error\"\n\t}\n\ttime.Sleep(time.Duration(t.PollIntervalMs) * time.Millisecond)\n}",
		Severity: Error,
		Fix:      FixNone,
	},
	{
		ID:       "MCP002",
		Name:     "tasks-list",
		Title:    "tasks/list was removed; keep the task IDs you created yourself",
		Summary:  "The paginated tasks/list method was removed because without sessions no scoping is possible. There is no replacement: remember the task IDs your client created, or delete the listing feature.",
		Spec:     sep2663 + "; " + changelog,
		HelpURI:  uri("MCP002"),
		Before:   "page, err := c.ListTasks(ctx, mcp.ListTasksRequest{})",
		After:    "ids := myStore.TaskIDs() // track the IDs returned by tools/call yourself",
		Severity: Error,
		Fix:      FixNone,
	},
	{
		ID:       "MCP003",
		Name:     "tasks-status-notification",
		Title:    "notifications/tasks/status became notifications/tasks (subscription only)",
		Summary:  "Servers used to push notifications/tasks/status whenever they liked. The extension sends notifications/tasks only for task IDs the client subscribed to with subscriptions/listen. Renaming a raw method literal is lexically safe and available as an opt-in fix; the delivery semantics still need review.",
		Spec:     extSpec + "#notifications; " + sep2663,
		HelpURI:  uri("MCP003"),
		Before:   `notify("notifications/tasks/status", task)`,
		After:    `notify("notifications/tasks", detailedTask) // only to subscribers (subscriptions/listen)`,
		Severity: Error,
		Fix:      FixOptIn,
		FixFlag:  "fix-literals",
	},
	{
		ID:       "MCP004",
		Name:     "tasks-capability",
		Title:    "capabilities.tasks was replaced by the io.modelcontextprotocol/tasks extension",
		Summary:  "Task support used to be negotiated with capabilities.tasks{list,cancel,requests} in initialize. It is now the extension io.modelcontextprotocol/tasks: servers list it in server/discover capabilities.extensions, clients in each request's _meta client capabilities. In dual mode (still serving 2025-11-25 peers) server-side findings are informational.",
		Spec:     sep2663 + "; " + extSpec + "#capabilities",
		HelpURI:  uri("MCP004"),
		Before:   "server.NewMCPServer(\"demo\", \"1.0.0\", server.WithTaskCapabilities(true, true, true))",
		After:    "server.NewMCPServer(\"demo\", \"1.0.0\",\n\tserver.WithExtensions(map[string]any{\"io.modelcontextprotocol/tasks\": map[string]any{}}))\n// only together with an engine that implements the extension",
		Severity: Error,
		Fix:      FixNone,
	},
	{
		ID:       "MCP005",
		Name:     "task-request-param",
		Title:    "The per-request params.task = {ttl} was removed; the server decides",
		Summary:  "Clients used to opt a tools/call (or sampling/elicitation request) into task execution with params.task = {ttl}. Servers now MUST ignore it: the server decides per request, and the client only declares the extension.",
		Spec:     sep2663 + "; " + extSpec,
		HelpURI:  uri("MCP005"),
		Before:   "req.Params.Task = &mcp.TaskParams{TTL: &ttl}",
		After:    "// declare io.modelcontextprotocol/tasks in the request's client capabilities;\n// the server answers with resultType \"task\" when it chooses to",
		Severity: Error,
		Fix:      FixNone,
	},
	{
		ID:       "MCP006",
		Name:     "task-ttl",
		Title:    "Task field ttl is now ttlMs",
		Summary:  "The Task field ttl (milliseconds, nullable) is ttlMs in the extension (integer milliseconds, nullable, required). In task-shaped wire structs whose tags carry only json keys an opt-in fix renames the tag.",
		Spec:     extSpec + "#task; " + sep2663,
		HelpURI:  uri("MCP006"),
		Before:   "TTL *int64 `json:\"ttl\"`",
		After:    "TTL *int64 `json:\"ttlMs\"`",
		Severity: Warning,
		Fix:      FixOptIn,
		FixFlag:  "fix-tags",
	},
	{
		ID:       "MCP007",
		Name:     "task-poll-interval",
		Title:    "Task field pollInterval is now pollIntervalMs",
		Summary:  "The Task field pollInterval is pollIntervalMs in the extension. Code that reads pollInterval from a modern peer silently gets nothing. In task-shaped wire structs whose tags carry only json keys an opt-in fix renames the tag.",
		Spec:     extSpec + "#task; " + sep2663,
		HelpURI:  uri("MCP007"),
		Before:   "PollInterval *int64 `json:\"pollInterval,omitempty\"`",
		After:    "PollInterval *int64 `json:\"pollIntervalMs,omitempty\"`",
		Severity: Warning,
		Fix:      FixOptIn,
		FixFlag:  "fix-tags",
	},
	{
		ID:       "MCP008",
		Name:     "nested-create-task-result",
		Title:    "CreateTaskResult is flat now: Result & Task with resultType \"task\"",
		Summary:  "A task-creating response used to be { task: Task }. It is now the Task itself merged into the result and discriminated by resultType: \"task\". Decoders that look for a nested task key, and servers that build one, must change.",
		Spec:     extSpec + "#creating-tasks; " + sep2663,
		HelpURI:  uri("MCP008"),
		Before:   "return map[string]any{\"task\": task}, nil",
		After:    "return map[string]any{\"resultType\": \"task\", \"taskId\": task.ID, \"status\": \"working\", \"ttlMs\": ttl, \"createdAt\": now, \"lastUpdatedAt\": now}, nil",
		Severity: Error,
		Fix:      FixNone,
	},
	{
		ID:       "MCP009",
		Name:     "tool-task-support",
		Title:    "Tool execution.taskSupport was removed from the protocol",
		Summary:  "Tools no longer declare execution.taskSupport. A tool that can only run as a task must answer -32021 (missing required client capability) to clients that did not declare the extension. Deleting the declaration compiles but changes behaviour for 2025-11-25 clients, so there is no automatic fix.",
		Spec:     sep2663 + "; " + extSpec + "#errors",
		HelpURI:  uri("MCP009"),
		Before:   "mcp.NewTool(\"render\", mcp.WithTaskSupport(mcp.TaskSupportRequired))",
		After:    "mcp.NewTool(\"render\") // and return -32021 to clients without the tasks extension",
		Severity: Warning,
		Fix:      FixNone,
	},
	{
		ID:       "MCP010",
		Name:     "input-required-side-channel",
		Title:    "input_required is answered with tasks/update, not through tasks/result",
		Summary:  "An input_required task used to be resolved by calling tasks/result early, which opened a side channel for elicitation/sampling tagged with the related-task _meta key. Now tasks/get returns inputRequests and the client answers with tasks/update{taskId, inputResponses}.",
		Spec:     extSpec + "#tasksupdate; " + sep2663,
		HelpURI:  uri("MCP010"),
		Before:   "if t.Status == mcp.TaskStatusInputRequired {\n\tres, err := c.TaskResult(ctx, req) // serves elicitation on the side\n}",
		After:    "if t.Status == \"input_required\" {\n\tanswers := handle(t.InputRequests)\n\tupdate(ctx, t.TaskID, answers) // tasks/update\n}",
		Severity: Warning,
		Fix:      FixNone,
	},
	{
		ID:       "MCP011",
		Name:     "legacy-meta-keys",
		Title:    "_meta keys related-task and model-immediate-response are gone",
		Summary:  "The _meta keys io.modelcontextprotocol/related-task and io.modelcontextprotocol/model-immediate-response are absent from the extension and the 2026-07-28 schema. Peers ignore them; drop them or keep them only on 2025-11-25 paths.",
		Spec:     changelog + "; " + extSpec,
		HelpURI:  uri("MCP011"),
		Before:   "meta := mcp.WithRelatedTask(taskID)",
		After:    "// no replacement: inputRequests travel inside tasks/get",
		Severity: Warning,
		Fix:      FixNone,
	},
	{
		ID:       "MCP012",
		Name:     "cancel-returns-task",
		Title:    "tasks/cancel returns an empty acknowledgement, not the Task",
		Summary:  "tasks/cancel used to return the cancelled Task. It now returns an empty acknowledgement; read the status with the next tasks/get.",
		Spec:     extSpec + "#taskscancel",
		HelpURI:  uri("MCP012"),
		Before:   "res, err := c.CancelTask(ctx, req)\nlog.Print(res.Status)",
		After:    "if _, err := cancel(ctx, id); err == nil {\n\tt, _ := getTask(ctx, id) // the status arrives with tasks/get\n}",
		Severity: Info,
		Fix:      FixNone,
	},
	{
		ID:       "MCP013",
		Name:     "client-hosted-tasks",
		Title:    "Client-hosted tasks (task-augmented sampling/elicitation) were removed",
		Summary:  "Servers could ask a client to run sampling/createMessage or elicitation/create as a task the client hosts. SEP-2260 forbids unsolicited server-to-client requests, and the extension has no client-hosted tasks.",
		Spec:     sep2663 + "; " + changelog,
		HelpURI:  uri("MCP013"),
		Before:   "caps.Tasks = &mcp.TasksCapability{Requests: &mcp.TaskRequestsCapability{Sampling: ...}}",
		After:    "// no replacement: servers request input through inputRequests of their own tasks",
		Severity: Warning,
		Fix:      FixNone,
	},
	{
		ID:       "MCP014",
		Name:     "mixed-advertisement",
		Title:    "Advertises io.modelcontextprotocol/tasks while the task engine is still legacy",
		Summary:  "The package declares the tasks extension but its task engine is the 2025-11-25 one (for example mcp-go WithTaskCapabilities/AddTaskTool, a tasks/result dispatcher or a nested CreateTaskResult). Peers will expect resultType \"task\", ttlMs and tasks/update, so the advertisement is false. This stays an error in dual mode.",
		Spec:     sep2663 + "; " + extSpec + "#capabilities",
		HelpURI:  uri("MCP014"),
		Before:   "server.NewMCPServer(\"s\", \"1\",\n\tserver.WithExtensions(map[string]any{\"io.modelcontextprotocol/tasks\": map[string]any{}}),\n\tserver.WithTaskCapabilities(false, true, true))",
		After:    "server.NewMCPServer(\"s\", \"1\", server.WithTaskCapabilities(false, true, true))\n// advertise the extension only from an engine that implements it (e.g. behind tasksbridge)",
		Severity: Error,
		Fix:      FixNone,
	},
	{
		ID:       "MCP015",
		Name:     "tasks-get-result",
		Title:    "tasks/get returns a DetailedTask that inlines result, error and inputRequests",
		Summary:  "The method name tasks/get is unchanged, but its result changed: the extension's tasks/get returns a DetailedTask (resultType \"complete\") that inlines the final result of a completed task, the error of a failed one and the inputRequests of an input_required one, with ttlMs and pollIntervalMs. Code that decodes the legacy bare Task result finds none of them; decode the DetailedTask.",
		Spec:     extSpec + "#tasksget; " + sep2663,
		HelpURI:  uri("MCP015"),
		Before:   "res, err := c.GetTask(ctx, req) // *mcp.GetTaskResult: a bare Task\nif res.Status == mcp.TaskStatusCompleted {\n\tout, _ := c.TaskResult(ctx, resultReq) // a second call for the result\n}",
		After:    "t, err := getTask(ctx, id) // DetailedTask\nif t.Status == \"completed\" {\n\tuse(t.Result) // inlined; a failed task carries t.Error\n}",
		Severity: Info,
		Fix:      FixNone,
	},
}

// All returns the rules MCP001…MCP015 in order. The MCP000 pseudo-rule is not
// included; see Directive. The returned slice is a copy.
func All() []Rule { return append([]Rule(nil), all...) }

// Directive returns the MCP000 pseudo-rule under which malformed, unknown or
// unused suppression directives are reported. It is always enabled.
func Directive() Rule { return directive }

// Lookup finds a rule by ID (case-insensitive), including MCP000.
func Lookup(id string) (Rule, bool) {
	id = strings.ToUpper(strings.TrimSpace(id))
	if id == DirectiveID {
		return directive, true
	}
	for _, r := range all {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}
