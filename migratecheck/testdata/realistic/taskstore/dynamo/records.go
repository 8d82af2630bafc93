// Package dynamo stores task state in a DynamoDB table. The records are a
// storage format, not MCP wire types: "ttl" is DynamoDB's expiry attribute.
package dynamo

import "encoding/json"

// TaskRecord is one item of the tasks table.
type TaskRecord struct {
	PK        string     `dynamodbav:"pk" json:"-"`
	SK        string     `dynamodbav:"sk" json:"-"`
	Task      StoredTask `dynamodbav:"task" json:"task"`
	Owner     string     `dynamodbav:"owner" json:"owner"`
	ExpiresAt int64      `dynamodbav:"ttl" json:"ttl"`
}

// StoredTask is the task part of a record.
type StoredTask struct {
	TaskID        string          `dynamodbav:"taskId" json:"taskId"`
	Status        string          `dynamodbav:"status" json:"status"`
	StatusMessage string          `dynamodbav:"statusMessage,omitempty" json:"statusMessage,omitempty"`
	CreatedAt     string          `dynamodbav:"createdAt" json:"createdAt"`
	TTL           int64           `dynamodbav:"ttl" json:"ttl"`
	PollInterval  int64           `dynamodbav:"pollInterval" json:"pollInterval,omitempty"`
	Result        json.RawMessage `dynamodbav:"result,omitempty" json:"result,omitempty"`
}
