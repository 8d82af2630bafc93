// Package dynamo is a DynamoDB storage layer for tasks: its records are not
// wire shapes, and "ttl" is DynamoDB's expiry attribute.
package dynamo

// Task is the wire task of the 2026-07-28 extension.
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTLMs         *int64 `json:"ttlMs"`
}

// TaskRecord is one item of the tasks table.
type TaskRecord struct {
	PK   string `dynamodbav:"pk" json:"pk"`
	SK   string `dynamodbav:"sk" json:"sk"`
	Task Task   `dynamodbav:"task" json:"task"`
	TTL  int64  `dynamodbav:"ttl" json:"ttl"`
}

// taskItem flattens the task into attributes.
type taskItem struct {
	TaskID    string `dynamodbav:"taskId" json:"taskId"`
	Status    string `dynamodbav:"status" json:"status"`
	CreatedAt string `dynamodbav:"createdAt" json:"createdAt"`
	TTL       int64  `dynamodbav:"ttl,omitempty" json:"ttl,omitempty"`
	// The record's own polling hint, stored as an attribute.
	PollInterval int64 `dynamodbav:"pollInterval,omitempty" json:"pollInterval,omitempty"`
}

var _ = []any{TaskRecord{}, taskItem{}}
