package modern

// ProtocolVersion is the MCP revision this package speaks. SEP-2663 calls it by
// its draft name "2026-06-30"; the wire value is always this one.
const ProtocolVersion = "2026-07-28"

// TasksExtensionID is the identifier of the tasks extension, the key under
// capabilities.extensions on both sides (M-20, M-49).
const TasksExtensionID = "io.modelcontextprotocol/tasks"

// Method names of the 2026-07-28 core and of the tasks extension.
const (
	MethodDiscover            = "server/discover"
	MethodToolsCall           = "tools/call"
	MethodToolsList           = "tools/list"
	MethodPromptsGet          = "prompts/get"
	MethodPromptsList         = "prompts/list"
	MethodResourcesRead       = "resources/read"
	MethodResourcesList       = "resources/list"
	MethodResourceTemplates   = "resources/templates/list"
	MethodCompletion          = "completion/complete"
	MethodSubscriptionsListen = "subscriptions/listen"

	// Tasks extension (reserved prefix "tasks/", M-68).
	MethodTasksGet    = "tasks/get"
	MethodTasksUpdate = "tasks/update"
	MethodTasksCancel = "tasks/cancel"

	// Server→client request methods that travel inside inputRequests (MRTR, M-48).
	MethodElicitationCreate     = "elicitation/create"
	MethodSamplingCreateMessage = "sampling/createMessage"
	MethodRootsList             = "roots/list"

	// Removed under 2026-07-28 + the extension: answered with -32601 (M-34, M-66).
	MethodTasksResult = "tasks/result"
	MethodTasksList   = "tasks/list"
)

// Notification methods.
const (
	NotificationTasks                     = "notifications/tasks"
	NotificationSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
	NotificationCancelled                 = "notifications/cancelled"
	NotificationProgress                  = "notifications/progress"
	NotificationMessage                   = "notifications/message"
	NotificationToolsListChanged          = "notifications/tools/list_changed"
	NotificationPromptsListChanged        = "notifications/prompts/list_changed"
	NotificationResourcesListChanged      = "notifications/resources/list_changed"
	NotificationResourcesUpdated          = "notifications/resources/updated"
)

// Reserved _meta keys (the 2026-07-28 per-request protocol fields, M-01, M-02).
const (
	MetaKeyProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaKeyClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaKeyClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaKeyLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaKeyServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaKeySubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	// MetaKeyRelatedTaskIDs is the ext-tasks draft's advisory list of task IDs
	// related to a request; a server MAY ignore it.
	MetaKeyRelatedTaskIDs = "io.modelcontextprotocol/relatedTaskIds"
	// MetaKeyProgressToken is the un-prefixed progress token key.
	MetaKeyProgressToken = "progressToken"
)

// HTTP header names of the Streamable HTTP transport (M-10, M-43). Header names are
// case-insensitive; these are the spellings of the specification.
const (
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderParamPrefix     = "Mcp-Param-"
)

// CacheScope is the cacheScope of a CacheableResult such as DiscoverResult.
type CacheScope string

// The two cache scopes.
const (
	CachePublic  CacheScope = "public"
	CachePrivate CacheScope = "private"
)

// Valid reports whether s is "public" or "private".
func (s CacheScope) Valid() bool { return s == CachePublic || s == CachePrivate }

// LoggingLevel is an RFC 5424 severity as used by io.modelcontextprotocol/logLevel.
type LoggingLevel string

// The eight logging levels of the schema.
const (
	LogDebug     LoggingLevel = "debug"
	LogInfo      LoggingLevel = "info"
	LogNotice    LoggingLevel = "notice"
	LogWarning   LoggingLevel = "warning"
	LogError     LoggingLevel = "error"
	LogCritical  LoggingLevel = "critical"
	LogAlert     LoggingLevel = "alert"
	LogEmergency LoggingLevel = "emergency"
)

// Valid reports whether l is one of the eight schema levels.
func (l LoggingLevel) Valid() bool {
	switch l {
	case LogDebug, LogInfo, LogNotice, LogWarning, LogError, LogCritical, LogAlert, LogEmergency:
		return true
	}
	return false
}
