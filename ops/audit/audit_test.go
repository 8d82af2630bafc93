package audit

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The log is created 0600, appends one JSON object per line across reopens,
// and refuses a file others may read.
func TestLogAppendsJSONLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	for i, action := range []string{ActionCreate, ActionResult} {
		l, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		Record(l, Event{Action: action, Era: "legacy", Principal: "ab12", Session: "S", Task: "T", Outcome: "ok"})
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		Record(l, Event{Action: "after close"}) // dropped, no panic
		if i == 0 {
			st, err := os.Stat(path)
			if err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("mode = %v, %v; want 0600", st.Mode().Perm(), err)
			}
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, e)
	}
	if len(got) != 2 || got[0].Action != ActionCreate || got[1].Action != ActionResult || got[0].Task != "T" || got[0].Principal != "ab12" {
		t.Fatalf("events = %+v", got)
	}
	if time.Since(got[0].Time) > time.Hour || got[0].Time.IsZero() {
		t.Errorf("time = %v", got[0].Time)
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("Open of a world-readable log: %v, want a refusal naming chmod 600", err)
	}
}

func TestNilSinkRecordsNothing(t *testing.T) {
	Record(nil, Event{Action: ActionCreate}) // must not panic
}
