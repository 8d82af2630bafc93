package modernface_test

import (
	"net/http/httptest"
	"testing"
	"time"

	modernface "github.com/tasksbridge/tasksbridge/face/modern"
	"github.com/tasksbridge/tasksbridge/internal/testkit/legacyfixture"
	"github.com/tasksbridge/tasksbridge/interop/peers"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	legacyup "github.com/tasksbridge/tasksbridge/upstream/legacy"
)

// The official conformance suite's task scenarios
// (@modelcontextprotocol/conformance@0.2.0-alpha.12, server mode, Node 22)
// against the bridge's modern face in front of a legacy upstream
// (interop/README.md). Each scenario's checks.json is read and every
// check must be SUCCESS (or SKIPPED/INFO where the harness itself skips).

// expectedFailures are the scenarios that cannot pass against a given
// upstream, with the reason (also in docs/CONFORMANCE.md, "Conformance
// suite"). A listed scenario that passes fails the test too, so the list
// stays honest.
var expectedFailures = map[string]map[string]string{
	"ts": {}, "go": {}, "go-asking": {},
	"ts-task-first": {"tasks-mrtr-composition": taskFirstReason},
	"go-task-first": {"tasks-mrtr-composition": taskFirstReason},
}

// taskFirstReason: a legacy test_tool_with_task that creates its task before
// it asks gives the client that task (M-55, as tasks-mrtr-input requires of a
// tool that asks inside its task); the scenario wants an MRTR round before
// any task exists, which only a tool that asks first can give (M-54 is a
// SHOULD of the server, and this one did not).
const taskFirstReason = "test_tool_with_task creates its task before asking: the client gets the task, not an MRTR round"

func TestConformanceTasksScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("conformance suite skipped in -short mode")
	}
	t.Parallel() // mostly waiting on Node: let the package's other tests run meanwhile
	peers.CheckTaskScenarios(t)

	upstreams := []struct {
		name      string
		scenarios []string
		start     func(t *testing.T) string
	}{
		{"ts", peers.TaskScenarios, func(t *testing.T) string {
			return peers.StartTSServer(t, peers.TSServerOptions{PollMs: 50, TimeScale: 0.05}).URL
		}},
		// The in-repo Go fixture asks for user_name on the tools/call stream
		// before it creates the task: the legacy shape of an MRTR round, which
		// the bridge turns into one (the TS fixture's expected failure).
		{"go", []string{"tasks-mrtr-composition"}, func(t *testing.T) string {
			fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.2, PollInterval: 50 * time.Millisecond})
			url, stop, err := fx.Start()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(stop)
			return url
		}},
		// Every tasks-* scenario against the in-repo Go fixture whose asking
		// tools (confirm_delete, multi_input) create their tasks already
		// input_required and ask inside them, as server-everything's do: the
		// client gets the task and its questions on tasks/get (M-55).
		{"go-asking", peers.TaskScenarios, func(t *testing.T) string {
			fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.2, PollInterval: 50 * time.Millisecond, AskingTasksInputRequired: true})
			url, stop, err := fx.Start()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(stop)
			return url
		}},
		// The same fixtures with a test_tool_with_task that creates its task
		// first and asks inside it before answering the tools/call (the
		// common 2025-11-25 shape): the client gets the task (an expected
		// failure of tasks-mrtr-composition, taskFirstReason).
		{"ts-task-first", []string{"tasks-mrtr-composition"}, func(t *testing.T) string {
			return peers.StartTSServer(t, peers.TSServerOptions{PollMs: 50, TimeScale: 0.05, Compose: "task-first"}).URL
		}},
		{"go-task-first", []string{"tasks-mrtr-composition"}, func(t *testing.T) string {
			fx := legacyfixture.New(legacyfixture.Options{TimeScale: 0.2, PollInterval: 50 * time.Millisecond, TaskFirstCompose: true})
			url, stop, err := fx.Start()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(stop)
			return url
		}},
	}
	for _, up := range upstreams {
		t.Run(up.name, func(t *testing.T) {
			results := peers.RunScenarios(t, startBridge(t, up.start(t)), up.scenarios)
			for _, sc := range up.scenarios {
				r := results[sc]
				reason, expected := expectedFailures[up.name][sc]
				switch {
				case r.OK && expected:
					t.Errorf("%s passes against the %s upstream but is listed as an expected failure (%s); remove it", sc, up.name, reason)
				case !r.OK && !expected:
					t.Errorf("%s failed against the %s upstream:\n%s", sc, up.name, r.Report)
				case !r.OK:
					t.Logf("%s: expected failure (%s):\n%s", sc, reason, r.Report)
				default:
					t.Logf("%s: pass (%d checks)", sc, r.Checks)
				}
			}
		})
	}
}

// startBridge serves the modern face in front of a legacy upstream URL on
// 127.0.0.1 and returns its endpoint.
func startBridge(t *testing.T, upstreamURL string) string {
	t.Helper()
	pool, err := legacyup.NewPool(legacyup.Config{Endpoint: upstreamURL, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	f, err := modernface.New(modernface.Options{Upstream: pool, Store: sessionmap.NewMemory(), Logger: quietLogger(), PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		f.Close()
		_ = pool.Close()
	})
	return srv.URL + "/mcp"
}
