package demo

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// task is the server's record of one task. All fields are guarded by
// Server.mu.
type task struct {
	id       string
	owner    string // principal bound at creation; "" without Authorization
	tool     string
	status   modern.TaskStatus
	message  string
	created  time.Time
	updated  time.Time
	expires  time.Time // zero: never (ttlMs null)
	ttlMs    *int64
	pollMs   int64
	result   json.RawMessage // CallToolResult of a completed task
	rpcErr   *rpc.Error      // error of a failed task
	inputs   modern.InputRequests
	answered map[string]bool
	keySeq   int

	// finish runs the scheduled end of a delayed task (slow/fail/error);
	// stop cancels its timer. Both are nil once the task has moved on.
	finish func()
	stop   func() bool
	// onAnswer continues an input_required task with an accepted response.
	onAnswer func(key string, resp json.RawMessage) (finish func(), err *rpc.Error)
}

// detailed returns the DetailedTask variant matching t's status (M-55): all
// outstanding inputRequests for input_required, result for completed, error
// for failed.
func (t *task) detailed() modern.DetailedTask {
	d := modern.DetailedTask{Task: t.base()}
	switch t.status {
	case modern.StatusInputRequired:
		d.InputRequests = make(modern.InputRequests, len(t.inputs))
		for k, v := range t.inputs {
			d.InputRequests[k] = v
		}
	case modern.StatusCompleted:
		d.Result = t.result
	case modern.StatusFailed:
		d.Error = t.rpcErr
	}
	return d
}

// base is the plain Task (no payload), as in CreateTaskResult.
func (t *task) base() modern.Task {
	return modern.Task{
		TaskID:         t.id,
		Status:         t.status,
		StatusMessage:  t.message,
		CreatedAt:      modern.FormatTime(t.created),
		LastUpdatedAt:  modern.FormatTime(t.updated),
		TTLMs:          t.ttlMs,
		PollIntervalMs: modern.Int64(t.pollMs),
	}
}

// newTaskID returns 128 bits from crypto/rand, hex encoded (M-65).
func newTaskID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand.Read never fails on supported platforms (Go ≥ 1.24).
		panic("demo: crypto/rand: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// Counters are observations of the server's task traffic, for the bridge's
// tests and benchmarks (for example to prove one upstream watcher per task).
type Counters struct {
	TasksCreated    int // CreateTaskResults returned
	TasksGet        int // tasks/get requests received (all tasks, including failures)
	TasksUpdate     int // tasks/update requests received
	TasksCancel     int // tasks/cancel requests received
	InputResponses  int // inputResponses entries accepted (answered an outstanding key)
	DuplicateKeys   int // inputResponses entries for a key that was already answered
	UnknownKeys     int // inputResponses entries for a key never issued for the task
	ListenStreams   int // subscriptions/listen streams opened with acknowledged taskIds
	TaskNotifies    int // notifications/tasks messages written
	RemovedMethods  int // tasks/result or tasks/list calls refused with -32601
	LegacyRejected  int // legacy initialize / era-less requests refused (modern-only)
	HeaderRejected  int // requests refused with -32020
	CapabilityFails int // requests refused with -32021
}

// store is the in-memory task table, guarded by Server.mu. Creation is synchronous, so a task is
// resolvable by tasks/get before its CreateTaskResult is written (M-53).
type store struct {
	tasks    map[string]*task
	gets     map[string]int // tasks/get per task id; survives expiry
	counters Counters
}

func newStore() *store {
	return &store{tasks: map[string]*task{}, gets: map[string]int{}}
}

// lookupLocked finds id for owner. A foreign, unknown or expired id is
// reported alike as not found, so existence does not leak (M-60, M-65).
func (s *Server) lookupLocked(id, owner string) (*task, *rpc.Error) {
	if id == "" {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: taskId is required")
	}
	t, ok := s.st.tasks[id]
	if !ok || t.owner != owner {
		return nil, modern.ErrTaskNotFound(id)
	}
	if !t.expires.IsZero() && !s.clock.Now().Before(t.expires) {
		s.dropLocked(t)
		return nil, modern.ErrTaskNotFound(id)
	}
	return t, nil
}

func (s *Server) dropLocked(t *task) {
	if t.stop != nil {
		t.stop()
	}
	t.stop, t.finish, t.onAnswer = nil, nil, nil
	delete(s.st.tasks, t.id)
}

// sweepLocked purges expired tasks (M-64: answering "not found" after
// deletion is compliant).
func (s *Server) sweepLocked() {
	now := s.clock.Now()
	for _, t := range s.st.tasks {
		if !t.expires.IsZero() && !now.Before(t.expires) {
			s.dropLocked(t)
		}
	}
}

// createTask stores a new working task and returns it; the caller holds no
// lock. The returned base snapshot is what CreateTaskResult carries.
func (s *Server) createTask(owner, tool string) (*task, modern.Task) {
	now := s.clock.Now()
	t := &task{
		id:       newTaskID(),
		owner:    owner,
		tool:     tool,
		status:   modern.StatusWorking,
		message:  "The operation is now in progress.",
		created:  now,
		updated:  now,
		pollMs:   s.opts.PollInterval.Milliseconds(),
		inputs:   modern.InputRequests{},
		answered: map[string]bool{},
	}
	if s.opts.TTL > 0 {
		ms := s.opts.TTL.Milliseconds()
		t.ttlMs = &ms
		t.expires = now.Add(s.opts.TTL)
	}
	s.mu.Lock()
	s.sweepLocked()
	s.st.tasks[t.id] = t
	s.st.counters.TasksCreated++
	snap := t.base()
	s.mu.Unlock()
	s.hub.publish(t.id)
	return t, snap
}

// changeLocked records a status change and returns the id to publish once
// the lock is released.
func (s *Server) changeLocked(t *task, status modern.TaskStatus, message string) {
	t.status = status
	t.message = message
	t.updated = s.clock.Now()
	if status.IsTerminal() {
		if t.stop != nil {
			t.stop()
		}
		t.stop, t.finish, t.onAnswer = nil, nil, nil
		t.inputs = modern.InputRequests{}
	}
}

// mutate runs f on task id under the lock if the task still exists and is
// not terminal, then publishes the change. It reports whether f ran.
func (s *Server) mutate(id string, f func(t *task)) bool {
	s.mu.Lock()
	t, ok := s.st.tasks[id]
	if !ok || t.status.IsTerminal() {
		s.mu.Unlock()
		return false
	}
	f(t)
	s.mu.Unlock()
	s.hub.publish(id)
	return true
}

// completeWith ends task id as completed with a CallToolResult (isError
// results are completed too, M-56).
func (s *Server) completeWith(id string, text string, isError bool) {
	res, _ := json.Marshal(map[string]any{
		"content": []map[string]any{{"type": "text", "text": text}},
		"isError": isError,
	})
	msg := "The operation completed."
	if isError {
		msg = "The tool reported an error: " + text
	}
	s.mutate(id, func(t *task) {
		t.result = res
		s.changeLocked(t, modern.StatusCompleted, msg)
	})
}

// failWith ends task id as failed with a JSON-RPC error (M-56).
func (s *Server) failWith(id string, e *rpc.Error) {
	s.mutate(id, func(t *task) {
		t.rpcErr = e
		s.changeLocked(t, modern.StatusFailed, "Tool execution failed: "+e.Message)
	})
}

// schedule arranges for finish to run after d on the server clock, or at
// once through CompleteNow. A d of zero runs finish before returning, so the
// task's end is deterministic and already visible to the first tasks/get.
func (s *Server) schedule(id string, d time.Duration, finish func()) {
	if d <= 0 {
		finish()
		return
	}
	var once sync.Once
	run := func() { once.Do(finish) }
	s.mutate(id, func(t *task) {
		t.finish = run
		t.stop = s.clock.AfterFunc(d, run)
	})
}

// askInput moves task id to input_required with one new request per params
// entry, each under a key unique for the task's lifetime (M-57): prefix-N
// with N counting up from 1 over the whole task. onAnswer continues the task
// when a key is answered. It returns the new keys in order.
func (s *Server) askInput(id, message, prefix, method string, params []any,
	onAnswer func(key string, resp json.RawMessage) (func(), *rpc.Error)) []string {
	var keys []string
	s.mutate(id, func(t *task) {
		for _, p := range params {
			b, _ := json.Marshal(p)
			t.keySeq++
			key := prefix + "-" + strconv.Itoa(t.keySeq)
			t.inputs[key] = modern.InputRequest{Method: method, Params: b}
			keys = append(keys, key)
		}
		t.onAnswer = onAnswer
		s.changeLocked(t, modern.StatusInputRequired, message)
	})
	return keys
}

// Snapshot returns the DetailedTask JSON of id as tasks/get would show it
// (without resultType), ignoring ownership. For tests.
func (s *Server) Snapshot(id string) (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.st.tasks[id]
	if !ok {
		return nil, false
	}
	b, _ := json.Marshal(t.detailed())
	return b, true
}

// Status returns the status of task id, or "" if it does not exist.
func (s *Server) Status(id string) modern.TaskStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.st.tasks[id]; ok {
		return t.status
	}
	return ""
}

// TaskIDs returns the ids of all stored tasks, sorted. For tests.
func (s *Server) TaskIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.st.tasks))
	for id := range s.st.tasks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// CompleteNow runs the scheduled end of a delayed task (slow_task, or
// fail_task/error_task with ms) immediately, without waiting for the clock.
// It reports whether there was such a pending end.
func (s *Server) CompleteNow(id string) bool {
	s.mu.Lock()
	t, ok := s.st.tasks[id]
	var finish func()
	if ok && t.finish != nil {
		finish = t.finish
		if t.stop != nil {
			t.stop()
		}
		t.finish, t.stop = nil, nil
	}
	s.mu.Unlock()
	if finish == nil {
		return false
	}
	finish()
	return true
}

// Counters returns a snapshot of the traffic counters.
func (s *Server) Counters() Counters {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.counters
}

// GetCount returns how many tasks/get requests named task id (including
// ones refused after the task expired).
func (s *Server) GetCount(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.gets[id]
}

func (s *Server) count(f func(c *Counters)) {
	s.mu.Lock()
	f(&s.st.counters)
	s.mu.Unlock()
}
