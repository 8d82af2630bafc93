package sessionmap

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeVlogStore writes a store with a value large enough for the value
// log, closes it and returns its directory and the value log's path.
func writeVlogStore(t *testing.T) (dir, vlog string) {
	t.Helper()
	dir = t.TempDir()
	clk := newManualClock()
	b := openTest(t, dir, clk)
	ctx := context.Background()
	sc := Scope{Session: "s"}
	task := testTask(sc, clk.Now())
	if err := b.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	threshold := b.db.Opts().ValueThreshold
	big := json.RawMessage(`{"x":"` + strings.Repeat("a", int(threshold)) + `"}`)
	if _, err := b.OweAnswers(ctx, sc, task.ID, map[string]json.RawMessage{"k": big}); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	vlogs, _ := filepath.Glob(filepath.Join(dir, "*.vlog"))
	if len(vlogs) != 1 {
		t.Fatalf("value logs: %v", vlogs)
	}
	if st, err := os.Stat(vlogs[0]); err != nil || st.Size() < threshold {
		t.Fatalf("the large value is not in the value log: %v", err)
	}
	return dir, vlogs[0]
}

// A damaged value log is found by Verify, naming the file, and the store
// refuses to open with that in plain words (before, Verify found nothing,
// the open cut the log silently and the task read failed later with an
// engine message).
func TestVerifyFindsDamagedValueLog(t *testing.T) {
	dir, vlog := writeVlogStore(t)
	rep, err := Verify(dir)
	if err != nil || rep.Err() != nil || rep.ValueLogs != 1 {
		t.Fatalf("clean store: %+v, %v", rep, err)
	}
	f, err := os.OpenFile(vlog, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	if _, err := f.WriteAt([]byte("XXXXXXXXXXXXXXXX"), st.Size()/2); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	rep, err = Verify(dir)
	name := filepath.Base(vlog)
	if err != nil || len(rep.Damaged) != 1 || rep.Damaged[0].File != name || !strings.Contains(rep.Damaged[0].Problem, "checksum") {
		t.Fatalf("damaged value log: %+v, %v", rep, err)
	}
	_, err = OpenBadger(dir, WithGCInterval(0), WithLogger(slog.New(slog.DiscardHandler)))
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "MIGRATION.md") ||
		strings.Contains(err.Error(), "Key:") || strings.Contains(err.Error(), "ErrEOF") {
		t.Fatalf("OpenBadger on a damaged value log: %v", err)
	}
	if st2, _ := os.Stat(vlog); st2.Size() != st.Size() {
		t.Fatalf("the refused open changed the value log: %d bytes, was %d", st2.Size(), st.Size())
	}
}

// The newest value log cut short by a crash (an entry whose write did not
// finish) is not damage: nothing acknowledged is lost, Badger drops it.
func TestVerifyAcceptsTornValueLogTail(t *testing.T) {
	dir, vlog := writeVlogStore(t)
	st, _ := os.Stat(vlog)
	if err := os.Truncate(vlog, st.Size()-100); err != nil {
		t.Fatal(err)
	}
	if rep, err := Verify(dir); err != nil || rep.Err() != nil {
		t.Fatalf("torn tail: %+v, %v", rep, err)
	}
	// Zeroes where the checksum should be: never written.
	if err := os.Truncate(vlog, st.Size()); err != nil {
		t.Fatal(err)
	}
	if rep, err := Verify(dir); err != nil || rep.Err() != nil {
		t.Fatalf("unwritten checksum: %+v, %v", rep, err)
	}
	// The same bytes in an older value log are damage.
	if err := os.Link(vlog, filepath.Join(dir, "000009.vlog")); err != nil {
		t.Fatal(err)
	}
	if rep, _ := Verify(dir); len(rep.Damaged) != 1 || rep.Damaged[0].File != filepath.Base(vlog) {
		t.Fatalf("a torn older value log: %+v", rep)
	}
}
