package taskkit

import (
	"context"
	"errors"
)

// ErrUnknownTask is returned for a task ID the store does not hold.
var ErrUnknownTask = errors.New("taskkit: unknown task")

// Record is what a Store keeps per task.
type Record struct {
	ID      string
	Status  string
	Message string
	Result  []byte
	Owner   string
}

// Store persists task records.
type Store interface {
	Get(ctx context.Context, id string) (*Record, error)
	Wait(ctx context.Context, id string) (*Record, error)
	List(ctx context.Context, owner string) ([]*Record, error)
	Cancel(ctx context.Context, id string) error
}
