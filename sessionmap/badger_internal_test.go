package sessionmap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/era"
)

type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func newManualClock() *manualClock {
	return &manualClock{now: time.Now().UTC().Truncate(time.Millisecond)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openTest(t testing.TB, dir string, clk *manualClock, opts ...Option) *Badger {
	t.Helper()
	opts = append([]Option{WithClock(clk.Now), WithGCInterval(0), WithLogger(discard())}, opts...)
	b, err := OpenBadger(dir, opts...)
	if err != nil {
		t.Fatalf("OpenBadger: %v", err)
	}
	return b
}

func i64p(v int64) *int64 { return &v }

func testTask(sc Scope, created time.Time) Task {
	return Task{ID: NewTaskID(), Scope: sc, Direction: LegacyToModern, Origin: OriginUpstreamTask,
		Method: "tools/call", ToolName: "t", CreatedAt: created}
}

// R4: a second bridge on the same --data-dir gets an error that names the
// directory and says another bridge is using it.
func TestBadgerLockedDir(t *testing.T) {
	dir := t.TempDir()
	clk := newManualClock()
	first := openTest(t, dir, clk)
	_, err := OpenBadger(dir, WithLogger(discard()))
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "another bridge") {
		t.Fatalf("second open = %v; want ErrLocked naming %s and another bridge", err, dir)
	}
	_, err = OpenBadger(dir, ReadOnly(), WithLogger(discard()))
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "probably a running bridge") {
		t.Fatalf("read-only open while locked = %v; want ErrLocked saying a running bridge holds %s", err, dir)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := openTest(t, dir, clk)
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	if err := second.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := second.GetTask(context.Background(), Scope{Session: "s"}, "x"); !errors.Is(err, ErrClosed) {
		t.Fatalf("GetTask after Close = %v, want ErrClosed", err)
	}
}

func TestBadgerReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clk := newManualClock()
	rw := openTest(t, dir, clk)
	sc := Scope{Session: "s"}
	var task Task
	for range 3 {
		clk.Advance(time.Millisecond)
		task = testTask(sc, clk.Now())
		if err := rw.CreateTask(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	if err := rw.CreateSession(ctx, Session{ID: "s", Era: era.Legacy}); err != nil {
		t.Fatal(err)
	}
	page, err := rw.ListTasks(ctx, sc, 1, "")
	if err != nil || page.NextCursor == "" {
		t.Fatalf("ListTasks = %+v, %v", page, err)
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}

	ro1 := openTest(t, dir, clk, ReadOnly())
	defer ro1.Close()
	ro2 := openTest(t, dir, clk, ReadOnly()) // read-only opens share the directory
	defer ro2.Close()
	if got, err := ro1.GetTask(ctx, sc, task.ID); err != nil || got.ID != task.ID {
		t.Fatalf("read-only GetTask = %+v, %v", got, err)
	}
	if p, err := ro2.ListTasks(ctx, sc, 1, page.NextCursor); err != nil || len(p.Tasks) != 1 {
		t.Fatalf("read-only ListTasks with an earlier cursor = %+v, %v", p, err)
	}
	if all, err := ro1.AllTasks(ctx, TaskFilter{}); err != nil || len(all) != 3 {
		t.Fatalf("AllTasks = %d, %v", len(all), err)
	}
	if err := ro1.CreateTask(ctx, testTask(sc, clk.Now())); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("CreateTask read-only = %v, want ErrReadOnly", err)
	}
	if _, err := ro1.PinCancel(ctx, sc, task.ID); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("PinCancel read-only = %v, want ErrReadOnly", err)
	}
	if _, err := OpenBadger(filepath.Join(dir, "missing"), ReadOnly()); err == nil || !strings.Contains(err.Error(), "no store") {
		t.Fatalf("read-only open of a missing dir = %v", err)
	}
}

// A corrupt record is an error wrapping ErrCorrupt, never a panic, and it
// does not break listing for the rest of the scope.
func TestBadgerCorruptRecord(t *testing.T) {
	ctx := context.Background()
	clk := newManualClock()
	b := openTest(t, t.TempDir(), clk)
	defer b.Close()
	sc := Scope{Session: "s"}
	good, bad := testTask(sc, clk.Now()), testTask(sc, clk.Now().Add(time.Millisecond))
	for _, x := range []Task{good, bad} {
		if err := b.CreateTask(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.CreateSession(ctx, Session{ID: "s", Era: era.Legacy}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		value []byte
		want  error
	}{
		{"garbage", []byte("\x00\xff\xfe garbage"), ErrCorrupt},
		{"empty", nil, ErrCorrupt},
		{"truncated json", []byte("\x01{\"id\":\"x\",\"sta"), ErrCorrupt},
		{"wrong shape", []byte("\x01[1,2,3]"), ErrCorrupt},
		{"missing fields", []byte("\x01{}"), ErrCorrupt},
		{"newer version", []byte("\x09{}"), ErrUnsupportedVersion},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			put := func(key []byte) {
				if err := b.update(context.Background(), func(txn *wtxn) error { return txn.Set(key, tc.value) }); err != nil {
					t.Fatal(err)
				}
			}
			put(taskKey(bad.ID))
			put(sessionKey("s"))
			if _, err := b.GetTask(ctx, sc, bad.ID); !errors.Is(err, tc.want) {
				t.Fatalf("GetTask = %v, want %v", err, tc.want)
			}
			if _, err := b.UpdateStatus(ctx, sc, bad.ID, Snapshot{Status: StatusCompleted}); !errors.Is(err, tc.want) {
				t.Fatalf("UpdateStatus = %v, want %v", err, tc.want)
			}
			if _, err := b.GetSession(ctx, sc); !errors.Is(err, tc.want) {
				t.Fatalf("GetSession = %v, want %v", err, tc.want)
			}
			// The list reads its own index entries; a damaged one is skipped.
			bad.CreatedAt = bad.CreatedAt.UTC()
			put(listKey(bad))
			p, err := b.ListTasks(ctx, sc, 10, "")
			if err != nil || len(p.Tasks) != 1 || p.Tasks[0].ID != good.ID {
				t.Fatalf("ListTasks with a corrupt neighbour = %+v, %v", p, err)
			}
			all, err := b.AllTasks(ctx, TaskFilter{})
			if !errors.Is(err, tc.want) || len(all) != 1 || !strings.Contains(err.Error(), bad.ID) {
				t.Fatalf("AllTasks = %d tasks, %v; want the good one and an error naming %s", len(all), err, bad.ID)
			}
			if _, err := b.AllSessions(ctx); !errors.Is(err, tc.want) {
				t.Fatalf("AllSessions = %v, want %v", err, tc.want)
			}
		})
	}
}

// A version-1 record as an older bridge wrote it must stay readable by every
// later bridge. Do not edit this literal; add a new one for a new version.
const taskRecordV1 = `{"id":"t-golden","principal":"ab12","session":"sess","direction":"legacy_to_modern",` +
	`"origin":"upstream_task","upstream":"https://up.example/mcp","upstreamTaskId":"up-1","method":"tools/call",` +
	`"toolName":"slow","requestedTtlMs":60000,"ttlMs":30000,"status":"completed","statusMessage":"done",` +
	`"createdAt":"2026-11-30T10:00:00Z","lastUpdatedAt":"2026-11-30T10:00:05.5Z","pollIntervalMs":1000,` +
	`"result":{"content":[],"isError":false},"answeredKeys":["a","b"],"writtenAt":"2026-11-30T10:00:05.6Z"}`

const sessionRecordV1 = `{"id":"sess","principal":"ab12","era":"legacy","protocolVersion":"2025-11-25",` +
	`"initializeParams":{"capabilities":{}},"logLevel":"info","createdAt":"2026-11-30T10:00:00Z",` +
	`"lastSeenAt":"2026-11-30T10:00:01Z","idleTimeoutMs":60000,"expiresAt":"2026-11-30T10:01:01Z"}`

func TestRecordV1Golden(t *testing.T) {
	task, err := decodeTask("golden", append([]byte{1}, taskRecordV1...))
	if err != nil {
		t.Fatal(err)
	}
	if task.ID != "t-golden" || task.Scope != (Scope{Principal: "ab12", Session: "sess"}) || task.Status != StatusCompleted ||
		*task.TTLMs != 30000 || *task.RequestedTTLMs != 60000 || *task.PollIntervalMs != 1000 ||
		string(task.Result) != `{"content":[],"isError":false}` || len(task.AnsweredKeys) != 2 ||
		!task.LastUpdatedAt.Equal(time.Date(2026, 11, 30, 10, 0, 5, 5e8, time.UTC)) {
		t.Fatalf("decoded v1 task = %+v", task)
	}
	sess, err := decodeSession("golden", append([]byte{1}, sessionRecordV1...))
	if err != nil || sess.ID != "sess" || sess.Era != era.Legacy || sess.IdleTimeoutMs != 60000 || sess.LogLevel != "info" {
		t.Fatalf("decoded v1 session = %+v, %v", sess, err)
	}
	// Today's encoder writes version 1 and round-trips.
	enc, err := encodeTask(task)
	if err != nil || enc[0] != 1 {
		t.Fatalf("encodeTask = %q, %v", enc, err)
	}
	back, err := decodeTask("roundtrip", enc)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(task)
	z, _ := json.Marshal(back)
	if string(a) != string(z) {
		t.Fatalf("round trip\n%s\n%s", a, z)
	}
}

func countPrefix(t *testing.T, b *Badger, prefix string) int {
	t.Helper()
	keys, err := b.keysWithPrefix([]byte(prefix), nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(keys)
}

// L-75: expired tasks leave the list index promptly under the injected clock.
func TestBadgerCollectExpired(t *testing.T) {
	ctx := context.Background()
	clk := newManualClock()
	b := openTest(t, t.TempDir(), clk)
	defer b.Close()
	sc := Scope{Principal: PrincipalFromAuthorization("Bearer gc"), Session: "s"}
	for i := range 40 {
		task := testTask(sc, clk.Now())
		if i < 30 {
			task.TTLMs = i64p(60_000 + int64(i))
		}
		if err := b.CreateTask(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		s := Session{ID: "idle-" + string(rune('a'+i)), Era: era.Legacy, IdleTimeoutMs: 1000}
		if err := b.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.CreateSession(ctx, Session{ID: "forever", Era: era.Legacy}); err != nil {
		t.Fatal(err)
	}
	if res, err := b.CollectExpired(ctx); err != nil || res != (GCResult{}) {
		t.Fatalf("early CollectExpired = %+v, %v", res, err)
	}
	clk.Advance(60_010 * time.Millisecond) // the first 11 tasks have expired
	res, err := b.CollectExpired(ctx)
	if err != nil || res.Tasks != 11 || res.Sessions != 5 {
		t.Fatalf("CollectExpired = %+v, %v; want 11 tasks, 5 sessions", res, err)
	}
	clk.Advance(time.Minute)
	if res, err := b.CollectExpired(ctx); err != nil || res.Tasks != 19 || res.Sessions != 0 {
		t.Fatalf("second CollectExpired = %+v, %v", res, err)
	}
	for prefix, want := range map[string]int{"t/": 10, "i/": 10, "j/": 10, "x/": 0, "s/": 1} {
		if got := countPrefix(t, b, prefix); got != want {
			t.Errorf("%s keys = %d, want %d", prefix, got, want)
		}
	}
	if p, err := b.ListTasks(ctx, sc, 100, ""); err != nil || len(p.Tasks) != 10 {
		t.Fatalf("ListTasks after GC = %d, %v", len(p.Tasks), err)
	}
}

// The background loop runs CollectExpired and stops on Close.
func TestBadgerGCLoop(t *testing.T) {
	ctx := context.Background()
	clk := newManualClock()
	passes := make(chan GCResult, 100)
	b := openTest(t, t.TempDir(), clk, WithGCInterval(time.Millisecond), withGCHook(func(r GCResult) {
		select {
		case passes <- r:
		default:
		}
	}))
	task := testTask(Scope{Session: "s"}, clk.Now())
	task.TTLMs = i64p(1000)
	if err := b.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	deadline := time.After(20 * time.Second) // failsafe only; the loop normally answers in milliseconds
	for removed := 0; removed == 0; {
		select {
		case r := <-passes:
			removed = r.Tasks
		case <-deadline:
			t.Fatal("the GC loop never removed the expired task")
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenUnsupportedLayout(t *testing.T) {
	dir := t.TempDir()
	clk := newManualClock()
	b := openTest(t, dir, clk)
	if err := b.update(context.Background(), func(txn *wtxn) error { return txn.Set(keyFormat, []byte("99")) }); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenBadger(dir, WithLogger(discard())); !errors.Is(err, ErrUnsupportedVersion) {
		t.Fatalf("open of a newer layout = %v, want ErrUnsupportedVersion", err)
	}
}

func TestNewTaskID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewTaskID()
		if len(id) != 24 || strings.ContainsAny(id, "+/=") || seen[id] {
			t.Fatalf("NewTaskID = %q (len %d, dup %v)", id, len(id), seen[id])
		}
		// 1000 draws would start with '-' or '_' about 31 times without the
		// redraw; such an id reads as a flag in `bridge tasks show ID`.
		if id[0] == '-' || id[0] == '_' {
			t.Fatalf("NewTaskID = %q starts with %q", id, id[0])
		}
		seen[id] = true
	}
}

// The data dir must not be left half-initialised when open fails.
func TestOpenNotADirectory(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenBadger(f, WithLogger(discard())); err == nil || !strings.Contains(err.Error(), f) {
		t.Fatalf("OpenBadger(file) = %v, want an error naming it", err)
	}
}

// A write that has returned is visible to the next read from any goroutine,
// although reads run at the newest durable timestamp rather than waiting for
// commits in flight (commit.go).
func TestBadgerReadAfterConcurrentWrites(t *testing.T) {
	clk := newManualClock()
	b := openTest(t, t.TempDir(), clk)
	defer b.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			sc := Scope{Session: fmt.Sprintf("s%d", w)}
			for range 25 {
				task := testTask(sc, clk.Now())
				if err := b.CreateTask(ctx, task); err != nil {
					errs <- err
					return
				}
				if _, err := b.GetTask(ctx, sc, task.ID); err != nil {
					errs <- fmt.Errorf("GetTask right after CreateTask returned: %w", err)
					return
				}
				if _, err := b.UpdateStatus(ctx, sc, task.ID, Snapshot{Status: StatusCompleted}); err != nil {
					errs <- err
					return
				}
				if got, err := b.GetTask(ctx, sc, task.ID); err != nil || got.Status != StatusCompleted {
					errs <- fmt.Errorf("GetTask after a terminal update = %v, %v", got.Status, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// writeClosedStore writes n tasks and closes the store, so that they sit in
// a table file; it returns the table files.
func writeClosedStore(t *testing.T, dir string, n int) []string {
	t.Helper()
	clk := newManualClock()
	b := openTest(t, dir, clk)
	sc := Scope{Session: "s"}
	for i := range n {
		if err := b.CreateTask(context.Background(), testTask(sc, clk.Now().Add(time.Duration(i)*time.Millisecond))); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	ssts, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil || len(ssts) == 0 {
		t.Fatalf("no table file written: %v %v", ssts, err)
	}
	return ssts
}

// Damaged data is never silent: 64 zero bytes anywhere in a table file make
// Verify name the file and OpenBadger (read-write and read-only) refuse the
// store with ErrDamaged naming it, instead of listing what it can still read.
func TestBadgerDamagedTable(t *testing.T) {
	clean := t.TempDir()
	writeClosedStore(t, clean, 93)
	if rep, err := Verify(clean); err != nil || rep.Err() != nil || rep.Tables == 0 {
		t.Fatalf("Verify(clean store) = %+v, %v", rep, err)
	}
	for _, at := range []string{"start", "middle", "end"} {
		t.Run(at, func(t *testing.T) {
			dir := t.TempDir()
			sst := writeClosedStore(t, dir, 93)[0]
			st, err := os.Stat(sst)
			if err != nil {
				t.Fatal(err)
			}
			off := map[string]int64{"start": 0, "middle": st.Size() / 2, "end": st.Size() - 64}[at]
			f, err := os.OpenFile(sst, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(make([]byte, 64), off); err != nil {
				t.Fatal(err)
			}
			_ = f.Close()
			name := filepath.Base(sst)

			rep, err := Verify(dir)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if len(rep.Damaged) != 1 || rep.Damaged[0].File != name {
				t.Fatalf("Verify damaged = %+v, want %s", rep.Damaged, name)
			}
			for _, ro := range []bool{false, true} {
				opts := []Option{WithGCInterval(0), WithLogger(discard())}
				if ro {
					opts = append(opts, ReadOnly())
				}
				b, err := OpenBadger(dir, opts...)
				if err == nil {
					all, lerr := b.AllTasks(context.Background(), TaskFilter{})
					_ = b.Close()
					t.Fatalf("OpenBadger(readOnly=%v) of a damaged store succeeded (lists %d tasks, %v)", ro, len(all), lerr)
				}
				if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), name) {
					t.Fatalf("OpenBadger(readOnly=%v) = %v, want ErrDamaged naming %s", ro, err, name)
				}
			}
		})
	}
}

// Badger's warnings and errors reach the log saying where they come from;
// its info lines are debug-level internals.
func TestBadgerLogLines(t *testing.T) {
	var buf strings.Builder
	g := badgerLogger{l: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), dir: "d"}
	g.Warningf("Block cache might be too small\n")
	g.Errorf("writeRequests: %v", errors.New("disk full"))
	g.Infof("Got compaction priority")
	out := buf.String()
	for _, want := range []string{`level=WARN msg="store engine warning: Block cache might be too small" data_dir=d`,
		`level=ERROR msg="store engine error: writeRequests: disk full" data_dir=d`,
		`level=DEBUG msg="badger: Got compaction priority" data_dir=d`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// Group commit, shown without timing: while one fsync round is held, a
// writer's task is neither acknowledged nor visible, reads of other records
// do not wait, and the seven writers that queue up meanwhile all return
// after one more round (two rounds for eight commits).
func TestBadgerGroupCommit(t *testing.T) {
	clk := newManualClock()
	b := openTest(t, t.TempDir(), clk)
	defer b.Close()
	ctx := context.Background()
	sc := Scope{Session: "s"}
	old := testTask(sc, clk.Now())
	if err := b.CreateTask(ctx, old); err != nil {
		t.Fatal(err)
	}

	g := b.clock.durable
	var rounds atomic.Int32
	roundStarted, release := make(chan struct{}), make(chan struct{})
	waiting := make(chan struct{}, 16)
	g.testWaiting = func() { waiting <- struct{}{} }
	g.testRound = func() {
		if rounds.Add(1) == 1 {
			close(roundStarted)
			<-release
		}
	}
	type created struct {
		id  string
		err error
	}
	returned := make(chan created, 8)
	create := func() {
		task := testTask(sc, clk.Now())
		returned <- created{task.ID, b.CreateTask(ctx, task)}
	}
	first := testTask(sc, clk.Now())
	go func() { returned <- created{first.ID, b.CreateTask(ctx, first)} }()
	<-roundStarted
	<-waiting
	for range 7 {
		go create()
	}
	for range 7 {
		<-waiting
	}
	select {
	case c := <-returned:
		t.Fatalf("CreateTask returned (%v) while its fsync round was still running", c.err)
	default:
	}
	if _, err := b.GetTask(ctx, sc, old.ID); err != nil {
		t.Fatalf("read of a durable task while a round runs: %v", err)
	}
	if _, err := b.GetTask(ctx, sc, first.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a task not yet fsynced is visible to reads: %v", err)
	}
	close(release)
	for range 8 {
		c := <-returned
		if c.err != nil {
			t.Fatal(c.err)
		}
		if _, err := b.GetTask(ctx, sc, c.id); err != nil {
			t.Fatalf("acknowledged task not readable: %v", err)
		}
	}
	if n := rounds.Load(); n != 2 {
		t.Fatalf("%d fsync rounds for 8 concurrent commits, want 2 (the held one and one shared by the other 7)", n)
	}
}

// A read-write operation that changes nothing (an unchanged poll, a touch
// within the granularity, answers already recorded) costs no fsync round.
func TestBadgerNoOpUpdateNoSync(t *testing.T) {
	clk := newManualClock()
	b := openTest(t, t.TempDir(), clk)
	defer b.Close()
	ctx := context.Background()
	sc := Scope{Session: "s"}
	if err := b.CreateSession(ctx, Session{ID: "s", Era: era.Legacy}); err != nil {
		t.Fatal(err)
	}
	task := testTask(sc, clk.Now())
	if err := b.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	snap := Snapshot{Status: StatusWorking, StatusMessage: "busy"}
	if _, err := b.UpdateStatus(ctx, sc, task.ID, snap); err != nil {
		t.Fatal(err)
	}
	if _, err := b.RecordAnswered(ctx, sc, task.ID, []string{"k1"}); err != nil {
		t.Fatal(err)
	}
	var rounds atomic.Int32
	b.clock.durable.testRound = func() { rounds.Add(1) }
	if _, err := b.UpdateStatus(ctx, sc, task.ID, snap); err != nil {
		t.Fatal(err)
	}
	if _, err := b.TouchSession(ctx, sc, nil); err != nil {
		t.Fatal(err)
	}
	if fresh, err := b.RecordAnswered(ctx, sc, task.ID, []string{"k1"}); err != nil || len(fresh) != 0 {
		t.Fatalf("RecordAnswered again = %v, %v", fresh, err)
	}
	if n := rounds.Load(); n != 0 {
		t.Fatalf("%d fsync rounds for operations that wrote nothing", n)
	}
	if _, err := b.UpdateStatus(ctx, sc, task.ID, Snapshot{Status: StatusCompleted}); err != nil {
		t.Fatal(err)
	}
	if n := rounds.Load(); n != 1 {
		t.Fatalf("%d fsync rounds for one terminal update, want 1", n)
	}
}

// A round notices a memtable or value log that filled up (the next file in
// sequence exists) with one stat, and only then reads the directory.
func TestLogFilesRotation(t *testing.T) {
	dir := t.TempDir()
	touch := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l := logFiles{ext: ".vlog", format: "%06d.vlog", active: -1}
	step := func(wantMoved bool, wantActive int64) {
		t.Helper()
		moved, err := l.syncRotated(dir, false)
		if err != nil || moved != wantMoved || l.active != wantActive {
			t.Fatalf("syncRotated = %v, %v, active %d; want %v, active %d", moved, err, l.active, wantMoved, wantActive)
		}
	}
	step(false, -1) // no log file yet
	touch("000001.vlog")
	step(true, 1)
	step(false, 1)
	touch("000003.vlog") // not the next in sequence: Badger never skips one
	step(false, 1)
	touch("000002.vlog")
	step(true, 3)
	touch("00004.mem") // another kind
	step(false, 3)
}

// A round fsyncs the value log only when a commit may have written to it:
// small records live in the memtable log alone, and a value of
// ValueThreshold bytes or more (here a large owed answer) goes to the value
// log, so the round that acknowledges it syncs that file too.
func TestBadgerValueLogSyncOnlyWhenWritten(t *testing.T) {
	clk := newManualClock()
	b := openTest(t, t.TempDir(), clk)
	defer b.Close()
	ctx := context.Background()
	sc := Scope{Session: "s"}
	g := b.clock.durable
	task := testTask(sc, clk.Now())
	if err := b.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	synced := g.vlogSynced
	if synced != g.vlogMarks.Load() {
		t.Fatalf("after the first rounds the value log is still unsynced: synced %d, marks %d", synced, g.vlogMarks.Load())
	}
	if err := b.CreateTask(ctx, testTask(sc, clk.Now())); err != nil {
		t.Fatal(err)
	}
	if g.vlogSynced != synced || g.vlogMarks.Load() != synced {
		t.Fatalf("a small record marked the value log: synced %d, marks %d, want %d", g.vlogSynced, g.vlogMarks.Load(), synced)
	}
	big := json.RawMessage(`{"x":"` + strings.Repeat("a", int(b.db.Opts().ValueThreshold)) + `"}`)
	if _, err := b.OweAnswers(ctx, sc, task.ID, map[string]json.RawMessage{"k": big}); err != nil {
		t.Fatal(err)
	}
	if g.vlogMarks.Load() == synced || g.vlogSynced != g.vlogMarks.Load() {
		t.Fatalf("a value-log record was acknowledged without a value-log fsync: synced %d, marks %d (before %d)",
			g.vlogSynced, g.vlogMarks.Load(), synced)
	}
	got, err := b.GetTask(ctx, sc, task.ID)
	if err != nil || len(got.OwedAnswers["k"]) != len(big) {
		t.Fatalf("GetTask = %d-byte answer, %v; want %d bytes", len(got.OwedAnswers["k"]), err, len(big))
	}
}
