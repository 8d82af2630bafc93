// Package memory is the in-process task store of the 2026-07-28 server. Its
// wire type is the extension's Task.
package memory

import (
	"sync"
	"time"
)

// Task is the extension's task object.
type Task struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          *int64 `json:"ttlMs"`
	PollIntervalMs *int64 `json:"pollIntervalMs,omitempty"`
}

// Store keeps tasks in memory.
type Store struct {
	mu    sync.Mutex
	tasks map[string]*Task
}

// Put stores a task.
func (s *Store) Put(t *Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tasks == nil {
		s.tasks = map[string]*Task{}
	}
	t.LastUpdatedAt = time.Now().UTC().Format(time.RFC3339)
	s.tasks[t.TaskID] = t
}

// Get returns a copy of a task.
func (s *Store) Get(id string) (Task, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[id]
	if !ok {
		return Task{}, false
	}
	return *t, true
}
