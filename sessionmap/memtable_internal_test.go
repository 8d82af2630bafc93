package sessionmap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// An open store's fixed heap is mostly Badger's memtable arena, live for
// the process's lifetime: about 20.8 MiB with a 16 MiB memtable, 5.2 MiB
// with memTableSize (4 MiB).
func TestBadgerFixedHeap(t *testing.T) {
	clk := newManualClock()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	b := openTest(t, t.TempDir(), clk)
	defer b.Close()
	if err := b.CreateTask(context.Background(), testTask(Scope{Session: "s"}, clk.Now())); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("an open store keeps %.1f MiB of heap (memtable %d MiB)", float64(grew)/(1<<20), b.db.Opts().MemTableSize>>20)
	if limit := int64(9 << 20); grew > limit {
		t.Errorf("an open store keeps %d B of heap, want ≤ %d", grew, limit)
	}
}

// Records larger than the memtable's batch limit still write and read:
// a status message (in both the task record and its list entry), a result
// and owed answers of hundreds of KiB each, which in the memtable would make
// one transaction larger than Badger takes (15 % of memTableSize), go to
// the value log.
func TestBadgerLargeRecords(t *testing.T) {
	clk := newManualClock()
	b := openTest(t, t.TempDir(), clk)
	defer b.Close()
	ctx := context.Background()
	sc := Scope{Principal: "p", Session: "s"}
	msg := strings.Repeat("m", 700<<10)
	task := testTask(sc, clk.Now())
	task.StatusMessage = msg
	task.TTLMs = i64p(int64(time.Hour / time.Millisecond))
	if err := b.CreateTask(ctx, task); err != nil {
		t.Fatalf("CreateTask with a %d B status message: %v", len(msg), err)
	}
	answers := map[string]json.RawMessage{}
	for _, k := range []string{"a", "b", "c"} {
		answers[k] = json.RawMessage(`{"x":"` + strings.Repeat(k, 500<<10) + `"}`)
	}
	if _, err := b.OweAnswers(ctx, sc, task.ID, answers); err != nil {
		t.Fatalf("OweAnswers of 1.5 MB: %v", err)
	}
	if got, err := b.GetTask(ctx, sc, task.ID); err != nil || got.StatusMessage != msg || len(got.OwedAnswers) != 3 ||
		string(got.OwedAnswers["b"]) != string(answers["b"]) {
		t.Fatalf("GetTask = %d B message, %d owed answers, %v; want %d B, 3", len(got.StatusMessage), len(got.OwedAnswers), err, len(msg))
	}
	result := json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("r", 900<<10) + `"}]}`)
	msg2 := strings.Repeat("n", 600<<10)
	if _, err := b.UpdateStatus(ctx, sc, task.ID, Snapshot{Status: StatusCompleted, StatusMessage: msg2, Result: result}); err != nil {
		t.Fatalf("UpdateStatus with a %d B result and a %d B message: %v", len(result), len(msg2), err)
	}
	got, err := b.GetTask(ctx, sc, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusCompleted || got.StatusMessage != msg2 || string(got.Result) != string(result) {
		t.Fatalf("GetTask = status %s, %d B message, %d B result; want completed, %d B, %d B",
			got.Status, len(got.StatusMessage), len(got.Result), len(msg2), len(result))
	}
	page, err := b.ListTasks(ctx, sc, 10, "")
	if err != nil || len(page.Tasks) != 1 || page.Tasks[0].StatusMessage != msg2 {
		t.Fatalf("ListTasks = %d tasks, %v; want the task with its %d B message", len(page.Tasks), err, len(msg2))
	}
}

// The batches that delete (DeleteSessionTasks, CollectExpired) stay under
// Badger's transaction limit with the longest ids the store takes: more
// than one batch of tasks whose ids are MaxIDLen bytes.
func TestBadgerDeleteLongIDs(t *testing.T) {
	clk := newManualClock()
	b := openTest(t, t.TempDir(), clk, WithSyncWrites(false))
	defer b.Close()
	ctx := context.Background()
	const n = gcBatch + 100
	create := func(sc Scope, tag string) {
		t.Helper()
		for i := range n {
			task := testTask(sc, clk.Now())
			task.ID = fmt.Sprintf("%s%05d", tag, i)
			task.ID += strings.Repeat("x", MaxIDLen-len(task.ID))
			task.TTLMs = i64p(60_000)
			if err := b.CreateTask(ctx, task); err != nil {
				t.Fatalf("CreateTask %d: %v", i, err)
			}
		}
	}
	del := Scope{Principal: strings.Repeat("p", MaxIDLen), Session: strings.Repeat("s", MaxIDLen)}
	create(del, "d")
	got, err := b.DeleteSessionTasks(ctx, del)
	if err != nil || got != n {
		t.Fatalf("DeleteSessionTasks = %d, %v; want %d", got, err, n)
	}
	create(Scope{Session: "gc"}, "g")
	clk.Advance(2 * time.Minute)
	res, err := b.CollectExpired(ctx)
	if err != nil || res.Tasks != n {
		t.Fatalf("CollectExpired = %d tasks, %v; want %d", res.Tasks, err, n)
	}
}

// A store whose last process stopped without closing it (a crash) leaves
// its memtable log for the next open to replay. Memtable sizes are not
// written into the store, so a log written with the older, larger memtable
// (legacyMemTableSize) may hold more than a memTableSize memtable fits,
// which Badger answers by exiting the process: such a log is replayed with
// the size it was written with, and the next open after a clean stop is
// back at memTableSize. A log written with memTableSize replays at that
// size.
func TestBadgerReplaysLegacyMemTableLog(t *testing.T) {
	for _, tc := range []struct {
		name         string
		written      int64
		tasks        int
		replayedWith int64
	}{
		// Tasks of about 250 KB (status message in the record and the list
		// entry, each under valueThreshold): 10 MB in the memtable, more
		// than memTableSize holds, written with the 16 MiB and the 8 MiB
		// memtables of earlier versions; 2.5 MB with the current one.
		{"legacy", legacyMemTableSize, 40, legacyMemTableSize},
		{"8MiB", 8 << 20, 24, legacyMemTableSize},
		{"current", memTableSize, 10, memTableSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newManualClock()
			dir, crashed := t.TempDir(), t.TempDir()
			ctx := context.Background()
			b := openTest(t, dir, clk, withMemTableSize(tc.written))
			sc := Scope{Session: "s"}
			msg := strings.Repeat("m", valueThreshold-2<<10)
			var ids []string
			for range tc.tasks {
				task := testTask(sc, clk.Now())
				task.StatusMessage = msg
				if err := b.CreateTask(ctx, task); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, task.ID)
			}
			// The files as a crash would leave them: every write above was
			// acknowledged, so it is on disk; nothing was flushed at Close.
			copyStore(t, dir, crashed)
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			mems := 0
			ents, _ := os.ReadDir(crashed)
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".mem") {
					mems++
				}
			}
			if mems == 0 {
				t.Fatal("the copied store has no memtable log to replay")
			}

			r := openTest(t, crashed, clk)
			if got := r.db.Opts().MemTableSize; got != tc.replayedWith {
				t.Errorf("a store with a %d MiB memtable's log opened with a %d MiB memtable, want %d MiB", tc.written>>20, got>>20, tc.replayedWith>>20)
			}
			for _, id := range ids {
				if got, err := r.GetTask(ctx, sc, id); err != nil || got.StatusMessage != msg {
					t.Fatalf("GetTask(%s) after the replay = %d B message, %v", id, len(got.StatusMessage), err)
				}
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			again := openTest(t, crashed, clk)
			defer again.Close()
			if got := again.db.Opts().MemTableSize; got != memTableSize {
				t.Errorf("after a clean stop the store opened with a %d MiB memtable, want %d MiB", got>>20, memTableSize>>20)
			}
			if got, err := again.GetTask(ctx, sc, ids[len(ids)-1]); err != nil || got.StatusMessage != msg {
				t.Fatalf("GetTask after the second open = %d B message, %v", len(got.StatusMessage), err)
			}
		})
	}
}

// copyStore copies a store's files (not its lock) from src to dst.
func copyStore(t *testing.T, src, dst string) {
	t.Helper()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() || e.Name() == "LOCK" {
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		in.Close()
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// A decoded task keeps no copy of what every record repeats: its id and
// scope are the caller's strings, its status, direction and origin the
// constants, its upstream, method and tool the last ones decoded. The
// legacy face keeps a decoded task for as long as its waits are parked.
func TestDecodedTaskSharesStrings(t *testing.T) {
	clk := newManualClock()
	b := openTest(t, t.TempDir(), clk)
	defer b.Close()
	ctx := context.Background()
	sc := Scope{Principal: PrincipalFromAuthorization("Bearer decoded"), Session: NewTaskID() + NewTaskID()}
	task := testTask(sc, clk.Now())
	task.Upstream, task.UpstreamTaskID, task.ToolName = "http://127.0.0.1:8123/mcp", NewTaskID()+NewTaskID(), "slow_task"
	if err := b.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	const n = 2000
	got := make([]Task, n)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range got {
		var err error
		if got[i], err = b.GetTask(ctx, sc, task.ID); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(got)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("a decoded task keeps %d B of strings", per)
	if limit := int64(96); per > limit {
		t.Errorf("a decoded task keeps %d B of heap beside its struct, want ≤ %d", per, limit)
	}
	g := got[n-1]
	if g.ID != task.ID || g.Scope != sc || g.Upstream != task.Upstream || g.UpstreamTaskID != task.UpstreamTaskID ||
		g.ToolName != task.ToolName || g.Method != task.Method || g.Status != StatusWorking || g.Direction != task.Direction || g.Origin != task.Origin {
		t.Errorf("decoded %+v, want %+v", g, task)
	}
}
