// Package operator holds the custom resource types of the task-runner
// Kubernetes operator. Their pollInterval and ttl fields configure the
// reconciler; they are not MCP fields.
package operator

// TaskRunSpec is the desired state of a TaskRun.
type TaskRunSpec struct {
	Image        string   `json:"image"`
	Args         []string `json:"args,omitempty"`
	PollInterval string   `json:"pollInterval,omitempty"`
	TTL          string   `json:"ttl,omitempty"`
}

// TaskRunStatus is the observed state of a TaskRun.
type TaskRunStatus struct {
	TaskID        string `json:"taskId,omitempty"`
	Status        string `json:"status,omitempty"`
	StatusMessage string `json:"statusMessage,omitempty"`
	StartedAt     string `json:"startedAt,omitempty"`
}

// TaskRun is the custom resource.
type TaskRun struct {
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	Spec       TaskRunSpec   `json:"spec"`
	Status     TaskRunStatus `json:"status,omitempty"`
}
