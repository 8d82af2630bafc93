package rollout

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsExampleOutput keeps the example output in docs/METRICS.md equal to
// what `bridge rollout --prometheus` prints for the recorded fixtures.
func TestDocsExampleOutput(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "METRICS.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, scenario := range []string{"legacy", "none"} {
		_, after, ok := strings.Cut(string(doc), "<!-- rollout-example:"+scenario+" -->\n```text\n")
		want, _, ok2 := strings.Cut(after, "```")
		if !ok || !ok2 {
			t.Fatalf("docs/METRICS.md lacks the rollout-example:%s block", scenario)
		}
		d, err := QueryPrometheus(context.Background(), http.DefaultClient, fakePrometheus(t, scenario, "7d"), "7d")
		if err != nil {
			t.Fatal(err)
		}
		d.Source = "http://prometheus:9090"
		var got bytes.Buffer
		if err := WriteText(&got, Decide(d)); err != nil {
			t.Fatal(err)
		}
		if got.String() != want {
			t.Errorf("%s example in docs/METRICS.md is stale; `bridge rollout` prints:\n%s", scenario, got.String())
		}
	}
}
