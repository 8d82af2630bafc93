package router_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// The principal the store keeps for a task is the credential's hash keyed
// with the store's principal key, not the plain SHA-256 of the credential
// (which a weak key or password could be guessed back from), and the
// store's records never hold the credential itself.
func TestStoredPrincipalsAreKeyed(t *testing.T) {
	const token = "Bearer weak-key-42"
	fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.05, PollInterval: 20 * time.Millisecond})
	up, stop, err := fx.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	mem := sessionmap.NewMemory()
	br := startBridge(t, router.Config{Upstream: up, UpstreamEra: "legacy", Store: mem})
	c := newModernClient(t, br.url, "keyed-app")
	c.authz = token
	ctx := ctxT(t)
	id := field(t, mustOK(t, "tools/call", c.call(ctx, "tools/call", map[string]any{
		"name": "slow_required", "arguments": map[string]any{"ms": 10, "text": "x"}})), "taskId")
	tasks, err := mem.AllTasks(context.Background(), sessionmap.TaskFilter{})
	if err != nil || len(tasks) != 1 || tasks[0].ID != id {
		t.Fatalf("stored tasks %v, %v", tasks, err)
	}
	plain := sessionmap.PrincipalFromAuthorization(token)
	if got, want := tasks[0].Scope.Principal, sessionmap.KeyPrincipal(mem.PrincipalKey(), plain); got != want || got == plain {
		t.Fatalf("stored principal %q; want the keyed %q, not the plain hash %q", got, want, plain)
	}
	b, _ := json.Marshal(tasks)
	if strings.Contains(string(b), "weak-key-42") {
		t.Fatalf("the store holds the credential: %s", b)
	}
	// And the client still reaches its task by the same credential.
	mustOK(t, "tasks/get", c.call(ctx, "tasks/get", map[string]any{"taskId": id}))
}
