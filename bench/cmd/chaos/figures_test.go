package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/modern"
)

// TestAccount: each anomaly lands in its own figure, and a run with none is
// clean.
func TestAccount(t *testing.T) {
	ok := func(marker, kind, final string) line {
		return line{Type: "task", Kind: kind, Marker: marker, TaskID: "t-" + marker, Expect: final, Final: final, ResultOK: true, Presented: 1}
	}
	upstream := map[string]modern.TaskStatus{
		"u1": modern.StatusCompleted, "u2": modern.StatusCancelled, "u3": modern.StatusCompleted,
		"u4": modern.StatusWorking, "u5": modern.StatusCompleted, "u6": modern.StatusCompleted, "u7": modern.StatusCompleted,
	}
	status := func(id string) modern.TaskStatus { return upstream[id] }

	clean := []line{ok("a", "slow", "completed"), ok("b", "cancel", "cancelled"), ok("c", "iserror", "failed"),
		{Type: "summary", Requests: 30}}
	created := map[string][]string{"a": {"u1"}, "b": {"u2"}, "c": {"u3"}}
	var f figures
	f.account(clean, created, status, demo.Counters{})
	if !f.clean() || f.Acknowledged != 3 || f.Requests != 30 || len(f.Examples) != 0 {
		t.Fatalf("clean run: %+v", f)
	}

	unknown := ok("d", "slow", "completed")
	unknown.Unknown, unknown.Final = true, ""
	wrong := ok("e", "slow", "completed")
	wrong.Final = "working"
	stuckUpstream := ok("f", "cancel", "cancelled")
	twice := ok("g", "elicit", "completed")
	twice.Presented = 3
	lines := append(clean, unknown, ok("h", "slow", "completed"), wrong, stuckUpstream, twice,
		line{Type: "unacked", Marker: "i"}, line{Type: "unacked", Marker: "j"},
		line{Type: "list", Missing: []string{"t-a"}},
		line{Type: "summary", Requests: 10, Timeouts: 2, Errors: 5, Lost: 1})
	created = map[string][]string{"a": {"u1"}, "b": {"u2"}, "c": {"u3"}, "d": {"u5"}, "e": {"u6"},
		"f": {"u4"}, "g": {"u7", "u8"}, "i": {"u9"}}
	f = figures{}
	f.account(lines, created, status, demo.Counters{DuplicateKeys: 1})
	want := figures{Acknowledged: 8, Lost: 2, WrongFinal: 2, DupCreates: 1, DupAnswers: 1, RePresented: 2, Timeouts: 2,
		Unacked: 2, Orphans: 1, RequestErrors: 5, Requests: 40, ListMisses: 1, SessionsLost: 1}
	f.Examples = nil
	if f.clean() {
		t.Error("a run with anomalies is clean")
	}
	if got := f; got.Acknowledged != want.Acknowledged || got.Lost != want.Lost || got.WrongFinal != want.WrongFinal ||
		got.DupCreates != want.DupCreates || got.DupAnswers != want.DupAnswers || got.RePresented != want.RePresented ||
		got.Timeouts != want.Timeouts || got.Unacked != want.Unacked || got.Orphans != want.Orphans ||
		got.RequestErrors != want.RequestErrors || got.Requests != want.Requests || got.ListMisses != want.ListMisses ||
		got.SessionsLost != want.SessionsLost {
		t.Errorf("figures\n got %+v\nwant %+v", got, want)
	}

	var b bytes.Buffer
	f.write(&b, config{replicas: 3, clients: 2, kinds: "slow"})
	for _, s := range []string{"| lost | 2 | 0 |", "| duplicate creates upstream | 1 | 0 |", "| client requests that timed out | 2 | 0 |"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}
}
