package legacyface

import (
	"sync"
	"sync/atomic"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// Per-principal limits (L-72, L-73): a principal (or, without credentials,
// a session) may have at most Config.MaxTasksPerPrincipal tools/call
// requests and Config.MaxWaitersPerPrincipal blocked tasks/result waits in
// flight at once. Beyond them the request gets a JSON-RPC error at once,
// never a hang, and the refusal is counted (Hooks.Refused). The counters
// live in this process: with several replicas the bound holds per replica.

// Defaults of the per-principal limits.
const (
	DefaultMaxTasksPerPrincipal   = 256
	DefaultMaxWaitersPerPrincipal = 1024
)

// Limits named in RefusedEvent.
const (
	LimitSessions = "sessions"
	LimitTasks    = "tasks"
	LimitWaiters  = "waiters"
)

type limits struct {
	maxTasks, maxWaiters atomic.Int64 // SetLimits changes them while serving (live.go)
	refused              func(RefusedEvent)

	mu      sync.Mutex
	tasks   map[string]int
	waiters map[string]int
}

func (l *limits) acquire(m *map[string]int, max int, key, what string) error {
	if max <= 0 {
		return nil
	}
	l.mu.Lock()
	if *m == nil {
		*m = map[string]int{}
	}
	n := (*m)[key]
	if n >= max {
		l.mu.Unlock()
		if l.refused != nil {
			l.refused(RefusedEvent{Limit: what})
		}
		// Their own limit, not the process's: HTTP 429 (rpc.LimitHTTP).
		if what == LimitTasks {
			return rpc.LimitError(limitNameTasks, rpc.LimitScopePrincipal, max, requestsRetryAfter,
				"too many concurrent tools/call requests for this client (limit %d, --max-tasks-per-principal); wait for some to finish, then retry", max)
		}
		return rpc.LimitError(limitNameWaiters, rpc.LimitScopePrincipal, max, requestsRetryAfter,
			"too many blocked tasks/result waits for this client (limit %d, --max-waiters-per-principal); poll with tasks/get, or retry when a wait ends", max)
	}
	(*m)[key] = n + 1
	l.mu.Unlock()
	return nil
}

func (l *limits) release(m *map[string]int, key string) {
	// Not skipped when unbounded: a bound lifted while calls were counted
	// (SetLimits) must still see them released.
	l.mu.Lock()
	if (*m)[key] <= 1 {
		delete(*m, key)
	} else {
		(*m)[key]--
	}
	l.mu.Unlock()
}

func (l *limits) acquireTask(key string) error {
	return l.acquire(&l.tasks, int(l.maxTasks.Load()), key, LimitTasks)
}

func (l *limits) releaseTask(key string) { l.release(&l.tasks, key) }

func (l *limits) acquireWaiter(key string) error {
	return l.acquire(&l.waiters, int(l.maxWaiters.Load()), key, LimitWaiters)
}

func (l *limits) releaseWaiter(key string) { l.release(&l.waiters, key) }
