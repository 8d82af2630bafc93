package router_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// The bridge keeps records of its own in the store, owned by
// sessionmap.BridgePrincipal (the shared upstream session, pending input
// requests, the requestState key). They are not
// client sessions or tasks: a client's tasks/list never shows them, and
// tasksbridge_sessions_active does not count them.
func TestInternalRecordsInvisibleToClientsAndMetrics(t *testing.T) {
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	up, stop, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	st := sessionmap.NewMemory()
	t.Cleanup(func() { _ = st.Close() })
	br := startBridge(t, router.Config{Upstream: up, UpstreamEra: "legacy", Store: st})
	ctx := ctxT(t)

	alice := newModernClient(t, br.url, "app")
	alice.authz = "Bearer alice-token"
	// An MRTR round (the requestState key) and a task that asks (its input
	// request records).
	round := mustOK(t, "tools/call", alice.call(ctx, "tools/call", map[string]any{"name": "test_tool_with_task"}))
	if field(t, round, "resultType") != "input_required" {
		t.Fatalf("tools/call: %s; want an MRTR round", round)
	}
	created := mustOK(t, "tools/call multi_input", alice.call(ctx, "tools/call", map[string]any{"name": "multi_input"}))
	id := field(t, created, "taskId")
	pollTask(t, ctx, alice, id, func(res json.RawMessage) bool { return len(inputKeys(t, res)) == 2 })

	all, err := st.AllSessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	internal := map[string]bool{}
	for _, s := range all {
		if s.Principal == sessionmap.BridgePrincipal {
			internal[s.ID] = true
		}
	}
	if !internal["modern-face-request-state-key"] || len(internal) < 3 {
		t.Fatalf("the store holds internal records %v; the test needs the requestState key and others", internal)
	}

	// tasks/list is legacy: legacy clients of a bridge on the same store in
	// front of a modern upstream (which remembers the upstream's era there).
	modernUp := startModern(t)
	lb := startBridge(t, router.Config{Upstream: modernUp, Store: st})
	lalice := newLegacyClient(t, lb.url, "legacy-app")
	lalice.authz = "Bearer alice-token"
	lanon := newLegacyClient(t, lb.url, "legacy-anon-app")
	for _, c := range []*rawClient{lalice, lanon} {
		mustOK(t, "initialize", c.initialize(ctx))
		own := field(t, mustOK(t, "tools/call task", c.call(ctx, "tools/call", map[string]any{
			"name": "slow_task", "arguments": map[string]any{"ms": 5, "text": "done"}, "task": map[string]any{}})), "task.taskId")
		var list struct {
			Tasks []struct {
				TaskID string `json:"taskId"`
			} `json:"tasks"`
		}
		if err := json.Unmarshal(mustOK(t, "tasks/list", c.call(ctx, "tasks/list", nil)), &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Tasks) != 1 || list.Tasks[0].TaskID != own {
			t.Errorf("tasks/list of %s = %+v; want only its own task %s", c.name, list.Tasks, own)
		}
	}
	// The upstream's era is the store's named record (M-08), not a
	// session: after the probe, no session record holds it.
	if all, err = st.AllSessions(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.Principal == sessionmap.BridgePrincipal && strings.HasPrefix(s.ID, "upstream-era-") {
			t.Errorf("session record %q holds the upstream's era; want the store's UpstreamEra record", s.ID)
		}
	}
	if got, _, err := st.UpstreamEra(context.Background(), modernUp); err != nil || got != era.Modern {
		t.Fatalf("UpstreamEra(%s) = %v, %v; want modern, remembered by the probe", modernUp, got, err)
	}

	// Two legacy client sessions are open, no modern listen stream.
	for b, want := range map[*bridgeEnv]map[string]float64{br: {"legacy": 0, "modern": 0}, lb: {"legacy": 2, "modern": 0}} {
		fams := families(t, scrape(t, b.base+"/metrics"))
		for era, n := range want {
			if got, _ := sample(fams, "tasksbridge_sessions_active", "era", era); got != n {
				t.Errorf("%s: sessions_active{%s} = %v; want %v (client sessions only)", b.base, era, got, n)
			}
		}
	}
}
