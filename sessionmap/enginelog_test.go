package sessionmap_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/ops/oplog"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// The store engine's warnings (a damaged or full disk) reach the operator's
// log without --log-libraries, tagged with the library; its info lines
// do not.
func TestEngineWarningsReachTheOperatorLog(t *testing.T) {
	var buf bytes.Buffer
	h, err := oplog.NewHandler(&buf, oplog.FormatText, slog.LevelDebug, false)
	if err != nil {
		t.Fatal(err)
	}
	g := sessionmap.EngineLogger(slog.New(h), "d")
	g.Warningf("Block cache might be too small\n")
	g.Infof("Got compaction priority")
	out := buf.String()
	if want := `level=WARN msg="store engine warning: Block cache might be too small" data_dir=d library=badger`; !strings.Contains(out, want) {
		t.Errorf("log lacks %q:\n%s", want, out)
	}
	if strings.Contains(out, "compaction") {
		t.Errorf("Badger's info line reached the log without --log-libraries:\n%s", out)
	}
}
