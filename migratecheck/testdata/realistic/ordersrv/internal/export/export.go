// Package export runs the CSV export jobs in the background.
package export

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// Job is an export in progress. It is an internal record, not a wire type.
type Job struct {
	ID        string
	Month     string
	Status    string
	StartedAt time.Time
	TTL       time.Duration
}

var (
	mu   sync.Mutex
	jobs = map[string]*Job{}
)

// Start registers a job and returns its identifier.
func Start(month string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	mu.Lock()
	jobs[id] = &Job{ID: id, Month: month, Status: "working", StartedAt: time.Now(), TTL: time.Hour}
	mu.Unlock()
	return id
}
