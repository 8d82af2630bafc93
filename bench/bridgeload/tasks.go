package bridgeload

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// resultText is the text every benchmark task completes with.
const resultText = "bridgeload-done"

// longTask is slow enough that only demo.CompleteNow ends it.
const longTaskMs = 10 * 60 * 1000

var longTaskParams = []byte(`{"name":"slow_task","arguments":{"ms":` + strconv.Itoa(longTaskMs) +
	`,"text":"` + resultText + `"},"task":{"ttl":` + strconv.Itoa(2*longTaskMs) + `}}`)

// Task is one task created through the bridge.
type Task struct {
	Local    string // the bridge's legacy task id
	Upstream string // the demo's task id (for CompleteNow and GetCount)
}

// Tracker maps tasks the bridge creates to their upstream ids: the demo
// knows them, the legacy client does not (the bridge hands out its own ids),
// so the new upstream id is the one that appeared during the call. Create
// tasks through one Tracker one at a time.
type Tracker struct {
	up    *Upstream
	mu    sync.Mutex
	known map[string]bool
}

// NewTracker starts tracking tasks of up.
func NewTracker(up *Upstream) *Tracker {
	t := &Tracker{up: up, known: map[string]bool{}}
	for _, id := range up.TaskIDs() {
		t.known[id] = true
	}
	return t
}

// Create makes a long task through the legacy session l.
func (t *Tracker) Create(ctx context.Context, l *Legacy) (Task, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, err := l.Call(ctx, "tools/call", longTaskParams, Hooks{})
	if err != nil {
		return Task{}, fmt.Errorf("create task: %w", err)
	}
	if r.Err != nil {
		return Task{}, fmt.Errorf("create task: %w", r.Err)
	}
	var res struct {
		Task struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"task"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || res.Task.TaskID == "" || res.Task.Status != "working" {
		return Task{}, fmt.Errorf("create task: not a working CreateTaskResult: %.200s", r.Result)
	}
	var fresh []string
	for _, id := range t.up.TaskIDs() {
		if !t.known[id] {
			t.known[id] = true
			fresh = append(fresh, id)
		}
	}
	if len(fresh) != 1 {
		return Task{}, fmt.Errorf("create task: %d new upstream tasks, want 1", len(fresh))
	}
	return Task{Local: res.Task.TaskID, Upstream: fresh[0]}, nil
}

// Wait is one tasks/result call: Blocked is closed at the first keep-alive
// (the request is parked in the bridge), Done when the answer is in.
type Wait struct {
	Blocked chan struct{}
	Done    chan struct{}
	// After Done:
	At  time.Time // when the answer was read
	Err error     // transport error, JSON-RPC error or wrong result
}

// StartWait sends tasks/result for task on l in a goroutine.
func StartWait(ctx context.Context, l *Legacy, task string) *Wait {
	w := &Wait{Blocked: make(chan struct{}), Done: make(chan struct{})}
	params, _ := json.Marshal(map[string]string{"taskId": task})
	var once sync.Once
	blocked := func() { once.Do(func() { close(w.Blocked) }) }
	go func() {
		defer close(w.Done)
		defer blocked() // an answer without a keep-alive also ends the wait for "blocked"
		r, err := l.Call(ctx, "tasks/result", params, Hooks{Comment: blocked})
		w.At = time.Now()
		w.Err = checkResult(r, err)
	}()
	return w
}

func checkResult(r *Reply, err error) error {
	if err != nil {
		return err
	}
	if r.Err != nil {
		return fmt.Errorf("tasks/result: %w", r.Err)
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != resultText {
		return fmt.Errorf("tasks/result: unexpected result %.200s", r.Result)
	}
	return nil
}

// RampWaits opens n blocked tasks/result waits, at most conns of them still
// connecting at a time (a connection storm would measure the listener, not
// the waits), and returns once every one is blocked: the waits, how many
// were still open then (one answered early is an error the caller checks),
// and how long the ramp took. at names wait i's session and task; what
// names the phase in errors.
func RampWaits(ctx context.Context, n, conns int, at func(i int) (*Legacy, string), what string) (ws []*Wait, blocked int, took time.Duration, err error) {
	start := time.Now()
	sem := make(chan struct{}, conns)
	ws = make([]*Wait, 0, n)
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return ws, 0, 0, fmt.Errorf("%s: ramp-up: %w", what, ctx.Err())
		}
		l, task := at(i)
		w := StartWait(ctx, l, task)
		go func() {
			<-w.Blocked
			<-sem
		}()
		ws = append(ws, w)
	}
	for _, w := range ws {
		select {
		case <-w.Blocked:
		case <-ctx.Done():
			return ws, 0, 0, fmt.Errorf("%s: not all blocked: %w", what, ctx.Err())
		}
	}
	took = time.Since(start)
	for _, w := range ws {
		select {
		case <-w.Done: // answered before completion: an error (checked by the caller)
		default:
			blocked++
		}
	}
	return ws, blocked, took, nil
}
