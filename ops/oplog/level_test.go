package oplog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// A LevelVar given to NewHandler changes what is logged at once, for the
// handler and the loggers derived from it (With).
func TestLevelVarChangesLive(t *testing.T) {
	var buf bytes.Buffer
	lv := new(slog.LevelVar)
	h, err := NewHandler(&buf, FormatText, lv, false)
	if err != nil {
		t.Fatal(err)
	}
	l := slog.New(h).With("component", "x")
	l.Debug("before")
	lv.Set(slog.LevelDebug)
	l.Debug("after")
	if strings.Contains(buf.String(), "before") || !strings.Contains(buf.String(), "after") {
		t.Fatalf("log: %q", buf.String())
	}
}
