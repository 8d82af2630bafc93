package legacyface_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// faultyStore reads tasks through a store that can go down (every read
// fails, naming the store's address as the Redis store does) or freeze
// (reads never answer). Writes go through: the watcher's record of the
// task's end is not what is under test.
type faultyStore struct {
	sessionmap.Store
	mode atomic.Int32 // storeUp, storeDown, storeFrozen
}

const (
	storeUp int32 = iota
	storeDown
	storeFrozen
)

const faultyAddr = "10.9.8.7:6379"

func (f *faultyStore) fault(ctx context.Context, op string) error {
	switch f.mode.Load() {
	case storeDown:
		return errors.New("sessionmap: " + op + ": Redis at " + faultyAddr + ": dial tcp " + faultyAddr + ": connect: connection refused")
	case storeFrozen:
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (f *faultyStore) GetTask(ctx context.Context, sc sessionmap.Scope, id string) (sessionmap.Task, error) {
	if err := f.fault(ctx, "get_task"); err != nil {
		return sessionmap.Task{}, err
	}
	return f.Store.GetTask(ctx, sc, id)
}

func (f *faultyStore) ListTasks(ctx context.Context, sc sessionmap.Scope, n int, cursor string) (sessionmap.Page, error) {
	if err := f.fault(ctx, "list_tasks"); err != nil {
		return sessionmap.Page{}, err
	}
	return f.Store.ListTasks(ctx, sc, n, cursor)
}

func (f *faultyStore) PinCancel(ctx context.Context, sc sessionmap.Scope, id string) (sessionmap.Task, error) {
	if err := f.fault(ctx, "pin_cancel"); err != nil {
		return sessionmap.Task{}, err
	}
	return f.Store.PinCancel(ctx, sc, id)
}

// A store outage or freeze while the task lives is the bridge's trouble,
// not the task's end: the blocking and the parked wait, and tasks/result,
// tasks/get, tasks/list and tasks/cancel, answer the retryable -32603 "the
// bridge's task store is unavailable; try again" (without the store's
// address), never -32602 "Task not found", which tells a client to drop
// a live task (L-38, L-45: -32602 is for ids that are unknown or expired).
// Once the store is back, the same task answers its result. Before, a wait
// answered "Task not found" on a store error, and a frozen store held
// tasks/get and the waits without bound.
func TestStoreFaultIsRetryableNotTaskNotFound(t *testing.T) {
	for _, fault := range []int32{storeDown, storeFrozen} {
		for _, kind := range []string{"blocking", "parked"} {
			name := map[int32]string{storeDown: "down", storeFrozen: "frozen"}[fault] + "/" + kind
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ctx := ctxT(t, 60*time.Second)
				up := startUpstream(t, demo.Options{})
				st := &faultyStore{Store: sessionmap.NewMemory()}
				br := startBridge(t, up, legacyface.Config{Store: st, DisableParkedWaits: kind == "blocking"})
				c := newRawClient(t, br.url)
				c.initialize(ctx, nil)
				id := taskIDOf(t, c.call(ctx, "tools/call", map[string]any{"name": "slow_task",
					"arguments": map[string]any{"ms": 3600000, "text": "survived"}, "task": map[string]any{}}))
				if s := statusOf(t, c.call(ctx, "tasks/get", map[string]any{"taskId": id})); s != "working" {
					t.Fatalf("tasks/get: %s", s)
				}
				c.drainEvents()
				got := make(chan *reply, 1)
				go func() {
					r, err := c.try(ctx, "tasks/result", map[string]any{"taskId": id})
					if err != nil {
						t.Errorf("tasks/result: %v", err)
					}
					got <- r
				}()
				if kind == "parked" {
					if err := legacyface.AwaitParked(ctx, br.b, 1); err != nil {
						t.Fatal(err)
					}
				} else {
					c.awaitEvent(ctx, "comment")
				}
				retryable := func(what string, r *reply) {
					t.Helper()
					if r == nil {
						t.Fatalf("%s: no answer", what)
					}
					if r.Err == nil || r.Err.Code != rpc.CodeInternalError ||
						!strings.Contains(r.Err.Message, "task store is unavailable; try again") {
						t.Errorf("%s with the store %s: %s; want the retryable -32603 saying the task store is unavailable", what, name, r.Envelope)
					}
					if r.Err != nil && strings.Contains(r.Err.Message, faultyAddr) {
						t.Errorf("%s: the client sees the store's address: %q", what, r.Err.Message)
					}
				}
				st.mode.Store(fault)
				// The upstream moves on (the task completes): the wait reads
				// the record and cannot.
				up.srv.CompleteNow(upstreamTaskID(t, st.Store, id))
				select {
				case r := <-got:
					retryable("the open tasks/result", r)
				case <-ctx.Done():
					t.Fatal("the open tasks/result never answered")
				}
				// Every task request answers the same while the store is
				// out (at once when it is down, within the store's bound
				// when it is frozen).
				var wg sync.WaitGroup
				for _, m := range []string{"tasks/result", "tasks/get", "tasks/cancel", "tasks/list"} {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var params any = map[string]any{"taskId": id}
						if m == "tasks/list" {
							params = nil
						}
						r, err := c.try(ctx, m, params)
						if err != nil {
							t.Errorf("%s: %v", m, err)
							return
						}
						retryable(m, r)
					}()
				}
				wg.Wait()
				st.mode.Store(storeUp)
				r := c.call(ctx, "tasks/result", map[string]any{"taskId": id})
				if r.Err != nil || !strings.Contains(string(r.Result), "survived") {
					t.Fatalf("tasks/result once the store is back: %s", r.Envelope)
				}
			})
		}
	}
}
