package router

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// /readyz: one failed check does not take the bridge out of rotation; it is
// not ready after readyFailures failed checks in a row, and ready again after
// the first good one.
func TestReadinessThreshold(t *testing.T) {
	s, err := New(Config{Upstream: "http://127.0.0.1:9/mcp", Store: sessionmap.NewMemory(), UpstreamEra: "modern"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.readyReuse = [2]time.Duration{} // every call checks
	results := []error{nil, errors.New("down"), errors.New("down"), nil, errors.New("down"), errors.New("down"), errors.New("down"), errors.New("down"), nil}
	want := []bool{true, true, true, true, true, true, false, false, true}
	i := 0
	s.readyCheck = func(context.Context) error { err := results[i]; i++; return err }
	for n := range results {
		err := s.ready(context.Background())
		if (err == nil) != want[n] {
			t.Fatalf("check %d: ready=%v (%v), want %v", n, err == nil, err, want[n])
		}
		if err != nil && !strings.Contains(err.Error(), "checks in a row failed") {
			t.Errorf("check %d: %v does not say how many checks failed", n, err)
		}
	}
}
