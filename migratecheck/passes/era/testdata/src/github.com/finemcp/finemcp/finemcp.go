// Package finemcp is a test stub of github.com/finemcp/finemcp.
package finemcp

const (
	methodTasksGet    = "tasks/get"
	methodTasksResult = "tasks/result"
	methodTasksCancel = "tasks/cancel"
	methodTasksList   = "tasks/list"
)

const (
	MethodTasksGet    = methodTasksGet
	MethodTasksResult = methodTasksResult
	MethodTasksCancel = methodTasksCancel
	MethodTasksList   = methodTasksList
)

type TaskToolsCapability struct {
	Call *struct{} `json:"call,omitempty"`
}

type TaskRequestsCapability struct {
	Tools *TaskToolsCapability `json:"tools,omitempty"`
}

type TaskCapability struct {
	List     *struct{}               `json:"list,omitempty"`
	Cancel   *struct{}               `json:"cancel,omitempty"`
	Requests *TaskRequestsCapability `json:"requests,omitempty"`
}

type ServerCapabilities struct {
	Tools *struct{}       `json:"tools,omitempty"`
	Tasks *TaskCapability `json:"tasks,omitempty"`
}

type TaskMetadata struct {
	TTL int `json:"ttl,omitempty"`
}

type CallToolParams struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Task      *TaskMetadata  `json:"task,omitempty"`
}

type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int   `json:"ttl"`
	PollInterval  *int   `json:"pollInterval,omitempty"`
}

type CreateTaskResult struct {
	Task Task `json:"task"`
}

type ListTasksResult struct {
	Tasks      []Task `json:"tasks"`
	NextCursor string `json:"nextCursor,omitempty"`
}

type TaskIdParams struct {
	TaskID string `json:"taskId"`
}

type TaskOptions struct{ TTL int }

type TaskStore struct{}

func NewTaskStore() *TaskStore                                                     { return &TaskStore{} }
func (s *TaskStore) Submit(f func() (any, error)) string                           { return "" }
func (s *TaskStore) SubmitWithOptions(o TaskOptions, f func() (any, error)) string { return "" }
func (s *TaskStore) Get(id string) (*Task, bool)                                   { return nil, false }
func (s *TaskStore) GetResult(id string) (any, error)                              { return nil, nil }
func (s *TaskStore) List(cursor string) ([]Task, string)                           { return nil, "" }
func (s *TaskStore) ListByOwner(owner, cursor string) ([]Task, string)             { return nil, "" }
func (s *TaskStore) Cancel(id string) error                                        { return nil }

type Option func()

func WithTaskStore(s *TaskStore) Option { return nil }
func WithMaxTasks(n int) Option         { return nil }
