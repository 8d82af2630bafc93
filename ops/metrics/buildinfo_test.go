package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/version"
)

// tasksbridge_build_info is 1 with the labels of internal/version, on the
// registry every Metrics serves, from the start.
func TestBuildInfo(t *testing.T) {
	m := New(Options{})
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	bi := version.Info()
	want := map[string]string{"version": bi.Version, "revision": bi.Revision, "dirty": "false", "goversion": bi.GoVersion}
	if bi.Dirty {
		want["dirty"] = "true"
	}
	found := false
	for _, mf := range mfs {
		if mf.GetName() != "tasksbridge_build_info" {
			continue
		}
		found = true
		if len(mf.GetMetric()) != 1 {
			t.Fatalf("build_info has %d series, want 1", len(mf.GetMetric()))
		}
		s := mf.GetMetric()[0]
		if v := s.GetGauge().GetValue(); v != 1 {
			t.Errorf("build_info = %v, want 1", v)
		}
		got := map[string]string{}
		for _, l := range s.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if len(got) != len(want) {
			t.Errorf("build_info labels %v, want %v", got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("build_info label %s = %q, want %q", k, got[k], v)
			}
		}
	}
	if !found {
		t.Fatal("tasksbridge_build_info is not registered")
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	if !strings.Contains(string(body), `tasksbridge_build_info{dirty=`) {
		t.Errorf("/metrics lacks tasksbridge_build_info:\n%.400s", body)
	}
}
