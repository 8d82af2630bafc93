package sessionmap_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// The crash test (a durable write survives SIGKILL): a child
// process writes sessions and tasks in a loop and prints an ACK line after
// each write has returned; the parent SIGKILLs it after a random number of
// ACKs, reopens the store and checks that every acknowledged write is there,
// that no record is undecodable, and that statuses only moved forward.

const (
	crashDirEnv  = "SESSIONMAP_CRASH_CHILD_DIR"
	crashSeedEnv = "SESSIONMAP_CRASH_CHILD_SEED"
	crashCycles  = 24
)

var crashPrincipals = []string{
	"",
	sessionmap.PrincipalFromAuthorization("Bearer crash-a"),
	sessionmap.PrincipalFromAuthorization("Bearer crash-b"),
}

// TestCrashChild is the child side; it only runs when the parent starts it.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("child process of TestCrashSIGKILL")
	}
	seed, _ := strconv.ParseUint(os.Getenv(crashSeedEnv), 10, 64)
	if err := crashChild(dir, seed); err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(3)
	}
}

func crashChild(dir string, seed uint64) error {
	ctx := context.Background()
	s, err := sessionmap.OpenBadger(dir, sessionmap.WithGCInterval(0), sessionmap.WithLogger(quietLogger()))
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	ack := func(format string, a ...any) { fmt.Fprintf(os.Stdout, "ACK "+format+"\n", a...) }

	// Try to push terminal tasks of earlier lives back to working: must be refused.
	all, err := s.AllTasks(ctx, sessionmap.TaskFilter{})
	if err != nil {
		return err
	}
	for i, task := range all {
		if i == 5 {
			break
		}
		if task.Status.Terminal() {
			got, err := s.UpdateStatus(ctx, task.Scope, task.ID, sessionmap.Snapshot{Status: sessionmap.StatusWorking, StatusMessage: "step 999"})
			if err != nil {
				return err
			}
			ack("R %s %s", task.ID, got.Status)
		}
	}
	for {
		p := crashPrincipals[rng.IntN(len(crashPrincipals))]
		sid := sessionmap.NewTaskID()
		if err := s.CreateSession(ctx, sessionmap.Session{ID: sid, Principal: p, Era: era.Legacy,
			InitializeParams: json.RawMessage(`{"capabilities":{"elicitation":{}}}`)}); err != nil {
			return err
		}
		ack("S %s %s", sid, orDash(p))
		sc := sessionmap.Scope{Principal: p, Session: sid}
		for range 2 {
			task := sessionmap.Task{ID: sessionmap.NewTaskID(), Scope: sc, Direction: sessionmap.LegacyToModern,
				Origin: sessionmap.OriginUpstreamTask, Method: "tools/call", ToolName: "crash", StatusMessage: "step 0"}
			if err := s.CreateTask(ctx, task); err != nil {
				return err
			}
			ack("T %s %s %s", task.ID, orDash(p), sid)
			steps := 1 + rng.IntN(4)
			for step := 1; step <= steps; step++ {
				st := sessionmap.StatusWorking
				if step%2 == 1 {
					st = sessionmap.StatusInputRequired
				}
				got, err := s.UpdateStatus(ctx, sc, task.ID, sessionmap.Snapshot{Status: st, StatusMessage: fmt.Sprintf("step %d", step)})
				if err != nil {
					return err
				}
				ack("U %s %d %s", task.ID, step, got.Status)
				fresh, err := s.RecordAnswered(ctx, sc, task.ID, []string{fmt.Sprintf("k%d", step), "k1"})
				if err != nil {
					return err
				}
				for _, k := range fresh {
					ack("A %s %s", task.ID, k)
				}
			}
			var got sessionmap.Task
			switch rng.IntN(3) {
			case 0:
				got, err = s.PinCancel(ctx, sc, task.ID)
			case 1:
				got, err = s.UpdateStatus(ctx, sc, task.ID, sessionmap.Snapshot{Status: sessionmap.StatusFailed,
					StatusMessage: "step 100", Error: json.RawMessage(`{"code":-32603,"message":"boom"}`)})
			default:
				got, err = s.UpdateStatus(ctx, sc, task.ID, sessionmap.Snapshot{Status: sessionmap.StatusCompleted,
					StatusMessage: "step 100", Result: json.RawMessage(`{"content":[],"isError":false}`)})
			}
			if err != nil {
				return err
			}
			ack("F %s %s", task.ID, got.Status)
			// A late upstream state after the terminal one must not stick.
			got, err = s.UpdateStatus(ctx, sc, task.ID, sessionmap.Snapshot{Status: sessionmap.StatusWorking, StatusMessage: "step 101"})
			if err != nil {
				return err
			}
			ack("R %s %s", task.ID, got.Status)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func unDash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}

// crashModel is what the parent knows was acknowledged.
type crashModel struct {
	sessions map[string]sessionmap.Scope
	tasks    map[string]*ackedTask
	acks     int
	// needsRecovery counts read-only opens that asked for --recover.
	needsRecovery int
}

type ackedTask struct {
	scope    sessionmap.Scope
	step     int    // highest acknowledged step
	terminal string // acknowledged terminal status
	answered map[string]bool
}

func (m *crashModel) apply(t *testing.T, line string) {
	f := strings.Fields(strings.TrimPrefix(line, "ACK "))
	m.acks++
	task := func() *ackedTask {
		at := m.tasks[f[1]]
		if at == nil {
			t.Fatalf("ACK for a task never acknowledged as created: %q", line)
		}
		return at
	}
	switch f[0] {
	case "S":
		m.sessions[f[1]] = sessionmap.Scope{Principal: unDash(f[2]), Session: f[1]}
	case "T":
		m.tasks[f[1]] = &ackedTask{scope: sessionmap.Scope{Principal: unDash(f[2]), Session: f[3]}, answered: map[string]bool{}}
	case "U":
		at := task()
		n, _ := strconv.Atoi(f[2])
		at.step = max(at.step, n)
	case "A":
		task().answered[f[2]] = true
	case "F":
		at := task()
		at.terminal = f[2]
		at.step = 100
	case "R":
		// The store answered a regression attempt with the effective status,
		// which must be the terminal one.
		if at := m.tasks[f[1]]; at != nil && at.terminal != "" && f[2] != at.terminal {
			t.Fatalf("regression changed a terminal status: %q (acked %s)", line, at.terminal)
		}
		if !sessionmap.Status(f[2]).Terminal() {
			t.Fatalf("regression attempt un-terminated a task: %q", line)
		}
	default:
		t.Fatalf("unknown ACK line %q", line)
	}
}

func stepOf(msg string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(msg, "step "))
	if err != nil {
		return -1
	}
	return n
}

func (m *crashModel) verify(t *testing.T, dir string, checkReadOnly bool) {
	t.Helper()
	ctx := context.Background()
	// The operator's read-only view either works or says why it cannot yet.
	if checkReadOnly {
		switch ro, err := sessionmap.OpenBadger(dir, sessionmap.ReadOnly(), sessionmap.WithLogger(quietLogger())); {
		case err == nil:
			// It sees every acknowledged record (it reads at the newest
			// version found on disk, memtable logs included).
			for id := range m.tasks {
				if _, err := ro.LookupTask(ctx, id); err != nil {
					t.Fatalf("read-only view after a crash misses acknowledged task %s: %v", id, err)
				}
			}
			_ = ro.Close()
		case errors.Is(err, sessionmap.ErrNeedsRecovery) && strings.Contains(err.Error(), "--recover"):
			m.needsRecovery++
		default:
			t.Fatalf("read-only open after a crash = %v", err)
		}
	}
	s, err := sessionmap.OpenBadger(dir, sessionmap.WithGCInterval(0), sessionmap.WithLogger(quietLogger()))
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	defer s.Close()
	// No half-written record anywhere.
	all, err := s.AllTasks(ctx, sessionmap.TaskFilter{})
	if err != nil {
		t.Fatalf("undecodable task after SIGKILL: %v", err)
	}
	if _, err := s.AllSessions(ctx); err != nil {
		t.Fatalf("undecodable session after SIGKILL: %v", err)
	}
	if len(all) < len(m.tasks) {
		t.Fatalf("store has %d tasks, %d were acknowledged", len(all), len(m.tasks))
	}
	for id, sc := range m.sessions {
		if _, err := s.GetSession(ctx, sc); err != nil {
			t.Fatalf("acknowledged session %s lost: %v", id, err)
		}
	}
	for id, at := range m.tasks {
		got, err := s.GetTask(ctx, at.scope, id)
		if err != nil {
			t.Fatalf("acknowledged task %s lost: %v", id, err)
		}
		if at.terminal != "" && string(got.Status) != at.terminal {
			t.Fatalf("task %s: acknowledged %s, stored %s", id, at.terminal, got.Status)
		}
		step := stepOf(got.StatusMessage)
		if got.CancelPinned {
			step = 100 // PinCancel sets its own message
		}
		if step < at.step || step > 100 {
			t.Fatalf("task %s: acknowledged step %d, stored %q (%s)", id, at.step, got.StatusMessage, got.Status)
		}
		if (got.Status == sessionmap.StatusCancelled) != got.CancelPinned {
			t.Fatalf("task %s: status %s with CancelPinned=%v", id, got.Status, got.CancelPinned)
		}
		for k := range at.answered {
			if !strings.Contains(","+strings.Join(got.AnsweredKeys, ",")+",", ","+k+",") {
				t.Fatalf("task %s: acknowledged answered key %s lost (have %v)", id, k, got.AnsweredKeys)
			}
		}
		if page, err := s.ListTasks(ctx, at.scope, sessionmap.MaxPageSize, ""); err != nil || !containsID(page.Tasks, id) {
			t.Fatalf("task %s readable but not listed in its scope (L-52): %v", id, err)
		}
	}
}

func containsID(ts []sessionmap.Task, id string) bool {
	for _, t := range ts {
		if t.ID == id {
			return true
		}
	}
	return false
}

func TestCrashSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	dir := t.TempDir()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	m := &crashModel{sessions: map[string]sessionmap.Scope{}, tasks: map[string]*ackedTask{}}
	for cycle := range crashCycles {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashSeedEnv+"="+strconv.FormatUint(rng.Uint64(), 10))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAfter := 1 + rng.IntN(30)
		sc := bufio.NewScanner(out)
		seen, killed := 0, false
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "ACK ") {
				continue // test framework output
			}
			// Every line read is acknowledged: the write returned before it
			// was printed. Lines still in the pipe after the kill count too.
			m.apply(t, line)
			seen++
			if seen == killAfter && !killed {
				if err := cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
				killed = true
			}
		}
		if err := sc.Err(); err != nil && !errors.Is(err, io.ErrClosedPipe) {
			t.Fatalf("cycle %d: reading child: %v", cycle, err)
		}
		werr := cmd.Wait()
		if !killed {
			t.Fatalf("cycle %d: child exited after %d ACKs before being killed: %v\n%s", cycle, seen, werr, stderr.String())
		}
		var ee *exec.ExitError
		if !errors.As(werr, &ee) || ee.ExitCode() != -1 {
			t.Fatalf("cycle %d: child did not die by signal: %v\n%s", cycle, werr, stderr.String())
		}
		m.verify(t, dir, cycle%4 == 0)
	}
	if len(m.tasks) == 0 || m.acks < crashCycles {
		t.Fatalf("too little was exercised: %d acks, %d tasks", m.acks, len(m.tasks))
	}
	t.Logf("%d SIGKILL cycles, %d acknowledged writes, %d tasks, %d sessions: none lost; "+
		"%d read-only opens needed --recover", crashCycles, m.acks, len(m.tasks), len(m.sessions), m.needsRecovery)
}
