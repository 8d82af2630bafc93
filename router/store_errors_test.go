package router_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/internal/testkit/syncbuf"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// downStore is a store that, once down, fails every task operation the way
// the Redis store does: with the server's address in the error.
type downStore struct {
	sessionmap.Store
	down atomic.Bool
}

const storeAddr = "10.9.8.7:6379"

func (d *downStore) err(op string) error {
	if d.down.Load() {
		return errors.New("sessionmap: " + op + ": Redis at " + storeAddr + ": dial tcp " + storeAddr + ": connect: connection refused")
	}
	return nil
}

func (d *downStore) CreateTask(ctx context.Context, t sessionmap.Task) error {
	if err := d.err("create_task"); err != nil {
		return err
	}
	return d.Store.CreateTask(ctx, t)
}

func (d *downStore) GetTask(ctx context.Context, sc sessionmap.Scope, id string) (sessionmap.Task, error) {
	if err := d.err("get_task"); err != nil {
		return sessionmap.Task{}, err
	}
	return d.Store.GetTask(ctx, sc, id)
}

type syncBuffer = syncbuf.Buffer

// A store failure reaches the client of either face as a -32603 it can act
// on, without the store's address; the operator's log has the detail at WARN.
func TestStoreFailureHidesInfrastructure(t *testing.T) {
	ctx := ctxT(t)
	check := func(what string, r reply, log *syncBuffer) {
		t.Helper()
		if r.Err == nil || r.Err.Code != rpc.CodeInternalError {
			t.Fatalf("%s with the store down: %v; want -32603", what, r)
		}
		if strings.Contains(r.Err.Message, storeAddr) || strings.Contains(r.Err.Message, "Redis") || strings.Contains(r.Err.Message, "dial tcp") {
			t.Errorf("%s: the client sees infrastructure: %q", what, r.Err.Message)
		}
		if !strings.Contains(r.Err.Message, "the bridge's task store is unavailable; try again") {
			t.Errorf("%s: message %q; want it to say the task store is unavailable", what, r.Err.Message)
		}
		if out := log.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, storeAddr) {
			t.Errorf("%s: the log lacks the store failure at WARN with its detail:\n%s", what, out)
		}
	}
	newBridge := func(up, era string) (*bridgeEnv, *downStore, *syncBuffer) {
		var log syncBuffer
		st := &downStore{Store: sessionmap.NewMemory()}
		t.Cleanup(func() { _ = st.Close() })
		br := startBridge(t, router.Config{Upstream: up, UpstreamEra: era, Store: st,
			Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))})
		return br, st, &log
	}

	// Legacy client, legacy face in front of a modern upstream.
	br, st, log := newBridge(startModern(t), "modern")
	lc := newLegacyClient(t, br.url, "legacy-app")
	mustOK(t, "initialize", lc.initialize(ctx))
	st.down.Store(true)
	check("legacy task-augmented tools/call", lc.call(ctx, "tools/call", map[string]any{
		"name": "slow_task", "arguments": map[string]any{"ms": 5, "text": "x"}, "task": map[string]any{}}), log)
	check("legacy tasks/get", lc.call(ctx, "tasks/get", map[string]any{"taskId": "t-unknown"}), log)

	// Modern client, modern face in front of a legacy upstream.
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	up, stop, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	br, st, log = newBridge(up, "legacy")
	mc := newModernClient(t, br.url, "modern-app")
	st.down.Store(true)
	check("modern tasks/get", mc.call(ctx, "tasks/get", map[string]any{"taskId": "t-unknown"}), log)
	check("modern task tools/call", mc.call(ctx, "tools/call", map[string]any{"name": "multi_input"}), log)
}
