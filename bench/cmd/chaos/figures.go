package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/modern"
)

// figures are the chaos run's results. The goal is zero for every figure
// but Cycles, Acknowledged and the informational ones.
type figures struct {
	Cycles       int
	Acknowledged int
	Lost         int // acknowledged, then unknown to the bridge, or never created upstream
	WrongFinal   int // acknowledged, known, but not ending as it should (status, result, upstream)
	DupCreates   int // upstream tasks beyond the first for one client call
	DupAnswers   int // input answers the upstream received for an already answered key
	RePresented  int // elicitations presented to a client beyond the first, per task
	Timeouts     int // client requests that hit the request timeout
	DriverKilled bool

	// Informational.
	Unacked       int // task creations the client saw fail (no task id)
	Orphans       int // of those, the ones the upstream created anyway
	RequestErrors int // client requests that failed otherwise (retried)
	Requests      int
	ListMisses    int // acknowledged tasks of a session tasks/list did not show
	SessionsLost  int
	// GETs through the proxy (attempts): resumptions with Last-Event-ID,
	// and GETs naming no stream (a session's listening stream, or a client
	// that lost a resumed stream before its first event id).
	ResumeGETs, BareGETs int
	Elapsed              time.Duration
	Examples             []string // one line per anomaly, the first few

	// The store: single or sentinel, and the bridges' --redis-wait-replicas.
	Topology     string
	WaitReplicas int
	// With -topology sentinel: primary kills, the sentinels' time to
	// promote the replica after each, and the probe's figures.
	Failovers   int
	Promotions  []time.Duration
	ProbeAcked  int
	ProbeLost   int
	ProbeErrors int
	Stalls      []time.Duration // per failover: kill to the first write acknowledged after it
}

// lossMeasured: a Sentinel run without --redis-wait-replicas measures what
// asynchronous replication loses in a failover; losses are its finding,
// not a failure of the run.
func (f *figures) lossMeasured() bool { return f.Topology == "sentinel" && f.WaitReplicas == 0 }

// quantile returns the q-quantile (nearest rank) of ds, 0 when empty.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// clean reports whether every figure whose goal is zero is zero.
func (f *figures) clean() bool {
	lossOK := f.lossMeasured() || f.Lost == 0 && f.WrongFinal == 0 && f.ProbeLost == 0
	return lossOK && f.DupCreates == 0 && f.DupAnswers == 0 &&
		f.RePresented == 0 && f.Timeouts == 0 && !f.DriverKilled && f.Acknowledged > 0
}

// upstreamEnd is the status the upstream task of each kind must end in: the
// bridge maps error_task's completed isError result to a failed legacy task
// (L-29), and a cancelled legacy task must be cancelled upstream.
var upstreamEnd = map[string]modern.TaskStatus{
	"slow": modern.StatusCompleted, "elicit": modern.StatusCompleted,
	"iserror": modern.StatusCompleted, "cancel": modern.StatusCancelled,
}

// account turns the clients' lines and the upstream's record into figures.
// created maps each call's marker to the upstream tasks created for it;
// status is the upstream's current status of a task.
func (f *figures) account(lines []line, created map[string][]string, status func(string) modern.TaskStatus, up demo.Counters) {
	example := func(format string, args ...any) {
		if len(f.Examples) < 12 {
			f.Examples = append(f.Examples, fmt.Sprintf(format, args...))
		}
	}
	for marker, ids := range created {
		if len(ids) > 1 {
			f.DupCreates += len(ids) - 1
			example("%s: %d upstream tasks for one tools/call", marker, len(ids))
		}
	}
	f.DupAnswers = up.DuplicateKeys
	for _, l := range lines {
		switch l.Type {
		case "task":
			f.Acknowledged++
			ids := created[l.Marker]
			switch {
			case l.Unknown:
				f.Lost++
				example("%s (%s, task %s): the bridge answered -32602 for an acknowledged task: %s", l.Marker, l.Kind, l.TaskID, l.Detail)
			case len(ids) == 0:
				f.Lost++
				example("%s (%s, task %s): acknowledged, but the upstream never created it", l.Marker, l.Kind, l.TaskID)
			case l.Final != l.Expect || !l.ResultOK:
				f.WrongFinal++
				example("%s (%s, task %s): ended %q (want %q), result ok %v: %s", l.Marker, l.Kind, l.TaskID, l.Final, l.Expect, l.ResultOK, l.Detail)
			default:
				if got := status(ids[0]); got != upstreamEnd[l.Kind] {
					f.WrongFinal++
					example("%s (%s, task %s): the client saw %s but the upstream task is %q (want %q)", l.Marker, l.Kind, l.TaskID, l.Final, got, upstreamEnd[l.Kind])
				}
			}
			if l.Kind == "elicit" && l.Presented > 1 {
				f.RePresented += l.Presented - 1
				example("%s (task %s): the elicitation was presented %d times", l.Marker, l.TaskID, l.Presented)
			}
		case "unacked":
			f.Unacked++
			if len(created[l.Marker]) > 0 {
				f.Orphans++
			}
		case "list":
			f.ListMisses += len(l.Missing)
			if len(l.Missing) > 0 {
				example("%s: tasks/list lacks %d acknowledged tasks, e.g. %s", l.Client, len(l.Missing), l.Missing[0])
			}
		case "summary":
			f.Requests += l.Requests
			f.RequestErrors += l.Errors
			f.Timeouts += l.Timeouts
			f.SessionsLost += l.Lost
		}
	}
	sort.Strings(f.Examples)
}

// write prints the figures as the Markdown table docs/RELIABILITY.md uses.
func (f *figures) write(w io.Writer, c config) {
	fmt.Fprintf(w, "chaos run: %d replicas, %d clients (tasks: %s), %s of kills (one every ~%s, down %s), seed %d, %s in all\n\n",
		c.replicas, c.clients, c.kinds, c.duration, c.killEvery, c.down, c.seed, f.Elapsed.Round(time.Second))
	if c.resultAtOnce || c.cutStreams {
		fmt.Fprintf(w, "clients call tasks/result right after the create: %v; the proxy cuts a killed replica's streams: %v\n\n", c.resultAtOnce, c.cutStreams)
	}
	if f.Topology == "sentinel" {
		fmt.Fprintf(w, "store: Sentinel (1 primary, 1 replica, 3 sentinels), primary killed every ~%s (down %s), --redis-wait-replicas %d\n\n",
			c.failoverEvery, c.primaryDown, f.WaitReplicas)
	}
	fmt.Fprintln(w, "| figure | value | goal |")
	fmt.Fprintln(w, "|---|---:|---|")
	row := func(name string, v int, goal string) { fmt.Fprintf(w, "| %s | %d | %s |\n", name, v, goal) }
	lossGoal := "0"
	if f.lossMeasured() {
		lossGoal = "measured (no --redis-wait-replicas)"
	}
	row("kill -9 cycles", f.Cycles, "")
	if f.Topology == "sentinel" {
		row("Redis primary failovers (kill -9)", f.Failovers, "")
	}
	row("tasks acknowledged", f.Acknowledged, "")
	row("lost", f.Lost, lossGoal)
	row("wrong final status", f.WrongFinal, lossGoal)
	row("duplicate creates upstream", f.DupCreates, "0")
	row("duplicate input answers upstream", f.DupAnswers, "0")
	row("input questions presented again", f.RePresented, "0")
	row("client requests that timed out", f.Timeouts, "0")
	row("client requests (all)", f.Requests, "")
	row("client requests failed otherwise (retried)", f.RequestErrors, "")
	row("creates without an answer (not acknowledged)", f.Unacked, "")
	row("… of which created upstream anyway", f.Orphans, "")
	row("acknowledged tasks missing from tasks/list", f.ListMisses, "")
	row("sessions lost", f.SessionsLost, "")
	row("GETs with Last-Event-ID (stream resumptions)", f.ResumeGETs, "")
	row("GETs without Last-Event-ID (listening streams, and reconnects of streams broken before their first event)", f.BareGETs, "")
	if f.Topology == "sentinel" {
		row("probe writes acknowledged", f.ProbeAcked, "")
		row("probe writes lost", f.ProbeLost, lossGoal)
		row("probe writes failed (retriable error after the failover timeout)", f.ProbeErrors, "")
		ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
		fmt.Fprintf(w, "| write stall per failover p50 / p99 / max (%d failovers) | %s / %s / %s | bounded |\n",
			len(f.Stalls), ms(quantile(f.Stalls, 0.5)), ms(quantile(f.Stalls, 0.99)), ms(quantile(f.Stalls, 1)))
		fmt.Fprintf(w, "| sentinels' promotion after the kill p50 / max | %s / %s | |\n",
			ms(quantile(f.Promotions, 0.5)), ms(quantile(f.Promotions, 1)))
	}
	if f.DriverKilled {
		fmt.Fprintln(w, "\nThe clients did not finish within -duration + -task-budget + 30s and were killed: their last tasks are not counted.")
	}
	if len(f.Examples) > 0 {
		fmt.Fprintf(w, "\nFirst anomalies:\n\n- %s\n", strings.Join(f.Examples, "\n- "))
	}
}
