package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

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
	f.ResumeGETs, f.BareGETs = 7, 3
	f.write(&b, config{replicas: 3, clients: 2, kinds: "slow"})
	for _, s := range []string{"| lost | 2 | 0 |", "| duplicate creates upstream | 1 | 0 |", "| client requests that timed out | 2 | 0 |",
		"| GETs with Last-Event-ID (stream resumptions) | 7 |  |", "before their first event) | 3 |  |"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}
}

// A Sentinel run with --redis-wait-replicas holds lost tasks and probe
// writes to zero; without it they are measured, not a failure; the stall
// quantiles are nearest-rank.
func TestFailoverFigures(t *testing.T) {
	f := figures{Topology: "sentinel", WaitReplicas: 1, Acknowledged: 10, ProbeLost: 1}
	if f.clean() {
		t.Error("a lost probe write with --redis-wait-replicas 1 is clean")
	}
	f.WaitReplicas = 0
	f.Lost = 2
	if !f.clean() {
		t.Error("losses without --redis-wait-replicas fail the run; they are its measurement")
	}
	f.DupCreates = 1
	if f.clean() {
		t.Error("a duplicate create is clean without --redis-wait-replicas")
	}
	ds := []time.Duration{3, 1, 2, 10}
	if quantile(ds, 0.5) != 2 || quantile(ds, 0.99) != 10 || quantile(ds, 1) != 10 || quantile(nil, 0.5) != 0 {
		t.Errorf("quantiles of %v: %v %v %v", ds, quantile(ds, 0.5), quantile(ds, 0.99), quantile(ds, 1))
	}
	var b bytes.Buffer
	f.Stalls = ds
	f.write(&b, config{topology: "sentinel"})
	if !strings.Contains(b.String(), "write stall per failover p50 / p99 / max") || !strings.Contains(b.String(), "measured") {
		t.Errorf("table:\n%s", b.String())
	}
}
