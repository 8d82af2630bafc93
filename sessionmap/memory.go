package sessionmap

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Memory is an in-memory Store (and Admin) for unit tests of other packages.
// It follows every Store rule except durability: its data lives as long as the
// value, and Close does not discard it (so a test can "reopen" it).
type Memory struct {
	opt    options
	secret []byte
	pkey   []byte // principal_key.go

	mu       sync.Mutex
	sessions map[string]Session
	tasks    map[string]Task

	events *MemoryEvents // resumable streams, shared by every bridge on this store

	creds   credTable   // upstream credentials (credentials.go)
	intents intentTable // create intents (intent.go)
	eras    eraTable    // upstream eras (upstream_era.go)
}

var (
	_ Store = (*Memory)(nil)
	_ Admin = (*Memory)(nil)
)

// NewMemory returns an empty in-memory store. WithClock applies; the
// Badger-only options are ignored.
func NewMemory(opts ...Option) *Memory {
	secret := make([]byte, secretLen)
	_, _ = rand.Read(secret)
	o := buildOptions(opts)
	ev := NewMemoryEvents()
	ev.clock = o.clock
	return &Memory{opt: o, secret: secret, pkey: newPrincipalKey(),
		sessions: map[string]Session{}, tasks: map[string]Task{}, events: ev}
}

func (m *Memory) now() time.Time { return m.opt.clock() }

// Close is a no-op; the data stays.
func (m *Memory) Close() error { return nil }

func (m *Memory) CreateSession(ctx context.Context, s Session) error {
	s, err := prepareSession(s, m.now())
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.sessions[s.ID]; ok && !sessionExpired(old, m.now()) {
		return fmt.Errorf("%w: session", ErrExists)
	}
	m.sessions[s.ID] = s
	return nil
}

func (m *Memory) GetSession(ctx context.Context, sc Scope) (Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[sc.Session]
	if !ok || !sessionVisibleKeyed(m.pkey, s, sc, m.now()) {
		return Session{}, ErrNotFound
	}
	return cloneSession(s), nil
}

func (m *Memory) TouchSession(ctx context.Context, sc Scope, logLevel *string) (Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[sc.Session]
	if !ok || !sessionVisibleKeyed(m.pkey, s, sc, m.now()) {
		return Session{}, ErrNotFound
	}
	s, changed := touchSession(s, logLevel, m.now())
	if changed {
		m.sessions[s.ID] = s
	}
	return cloneSession(s), nil
}

func (m *Memory) DeleteSession(ctx context.Context, sc Scope) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[sc.Session]
	if !ok || !sessionVisibleKeyed(m.pkey, s, sc, m.now()) {
		return ErrNotFound
	}
	delete(m.sessions, s.ID)
	return nil
}

func (m *Memory) CreateTask(ctx context.Context, t Task) error {
	t, err := prepareTask(t, m.now())
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tasks[t.ID]; ok {
		return fmt.Errorf("%w: task", ErrExists)
	}
	m.tasks[t.ID] = t
	return nil
}

// visible returns the task if sc owns it and it is live. Caller holds mu.
func (m *Memory) visible(sc Scope, id string) (Task, bool) {
	t, ok := m.tasks[id]
	if !ok || !sc.Valid() || !ownedBy(m.pkey, sc, t.Scope) || t.Expired(m.now()) {
		return Task{}, false
	}
	return t, true
}

func (m *Memory) GetTask(ctx context.Context, sc Scope, id string) (Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.visible(sc, id)
	if !ok {
		return Task{}, ErrNotFound
	}
	return cloneTask(t), nil
}

func (m *Memory) UpdateStatus(ctx context.Context, sc Scope, id string, snap Snapshot) (Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.visible(sc, id)
	if !ok {
		return Task{}, ErrNotFound
	}
	next, changed, err := applySnapshot(t, snap, m.now())
	if err != nil {
		return t, err
	}
	if changed {
		m.tasks[id] = next
	}
	return cloneTask(next), nil
}

func (m *Memory) PinCancel(ctx context.Context, sc Scope, id string) (Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.visible(sc, id)
	if !ok {
		return Task{}, ErrNotFound
	}
	next, err := pinCancel(t, m.now())
	if err != nil {
		return cloneTask(t), err
	}
	m.tasks[id] = next
	return cloneTask(next), nil
}

func (m *Memory) RecordAnswered(ctx context.Context, sc Scope, id string, keys []string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.visible(sc, id)
	if !ok {
		return nil, ErrNotFound
	}
	next, fresh := recordAnswered(t, keys, m.now())
	m.tasks[id] = next
	return fresh, nil
}

func (m *Memory) OweAnswers(ctx context.Context, sc Scope, id string, answers map[string]json.RawMessage) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.visible(sc, id)
	if !ok {
		return nil, ErrNotFound
	}
	next, fresh, err := oweAnswers(t, answers, m.now())
	if err != nil {
		return nil, err
	}
	m.tasks[id] = next
	return fresh, nil
}

func (m *Memory) SettleAnswers(ctx context.Context, sc Scope, id string, keys []string) (Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.visible(sc, id)
	if !ok {
		return Task{}, ErrNotFound
	}
	next, _ := settleAnswers(t, keys, m.now())
	m.tasks[id] = next
	return cloneTask(next), nil
}

func (m *Memory) SettleUpstream(ctx context.Context, sc Scope, id string) (Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.visible(sc, id)
	if !ok {
		return Task{}, ErrNotFound
	}
	next, _ := settleUpstream(t, m.now())
	m.tasks[id] = next
	return cloneTask(next), nil
}

func (m *Memory) PendingUpstream(ctx context.Context) ([]Task, error) {
	return m.AllTasks(ctx, TaskFilter{OwesUpstream: true})
}

func (m *Memory) ListTasks(ctx context.Context, sc Scope, pageSize int, cursor string) (Page, error) {
	return m.listTasks(sc, pageSize, cursor, listView)
}

func (m *Memory) ListTasksFull(ctx context.Context, sc Scope, pageSize int, cursor string) (Page, error) {
	return m.listTasks(sc, pageSize, cursor, cloneTask)
}

func (m *Memory) listTasks(sc Scope, pageSize int, cursor string, view func(Task) Task) (Page, error) {
	if !sc.Valid() {
		return Page{}, invalid("list scope needs a principal or a session")
	}
	var after *pos
	if cursor != "" {
		p, err := decodeCursor(m.secret, sc, cursor)
		if err != nil {
			return Page{}, err
		}
		after = &p
	}
	m.mu.Lock()
	var all []Task
	now := m.now()
	for _, t := range m.tasks {
		if sc.Owns(t) && !t.Expired(now) && (after == nil || comparePos(posOf(t), *after) > 0) {
			all = append(all, view(t))
		}
	}
	m.mu.Unlock()
	slices.SortFunc(all, newerFirst)
	n := clampPageSize(pageSize)
	var page Page
	if len(all) > n {
		page.Tasks = all[:n]
		page.NextCursor = encodeCursor(m.secret, sc, posOf(all[n-1]))
	} else {
		page.Tasks = all
	}
	return page, nil
}

func (m *Memory) DeleteSessionTasks(ctx context.Context, sc Scope) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id, t := range m.tasks {
		if t.Scope == sc {
			delete(m.tasks, id)
			n++
		}
	}
	return n, nil
}

// AllSessions implements Admin.
func (m *Memory) AllSessions(ctx context.Context) ([]Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Session
	for _, s := range m.sessions {
		if !sessionExpired(s, m.now()) {
			out = append(out, cloneSession(s))
		}
	}
	slices.SortFunc(out, func(a, b Session) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out, nil
}

// AllTasks implements Admin.
func (m *Memory) AllTasks(ctx context.Context, f TaskFilter) ([]Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Task
	for _, t := range m.tasks {
		if !t.Expired(m.now()) && f.match(t) {
			out = append(out, cloneTask(t))
		}
	}
	slices.SortFunc(out, newerFirst)
	return out, nil
}

// LookupSession implements Admin.
func (m *Memory) LookupSession(ctx context.Context, id string) (Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok || sessionExpired(s, m.now()) {
		return Session{}, ErrNotFound
	}
	return cloneSession(s), nil
}

// LookupTask implements Admin.
func (m *Memory) LookupTask(ctx context.Context, id string) (Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok || t.Expired(m.now()) {
		return Task{}, ErrNotFound
	}
	return cloneTask(t), nil
}

// CheckEpoch: a memory store lives and dies with its process, so it is
// never lost while open.
func (m *Memory) CheckEpoch(ctx context.Context) error { return ctx.Err() }

// PrincipalKey returns the memory store's principal key (principal_key.go).
func (m *Memory) PrincipalKey() []byte { return m.pkey }
