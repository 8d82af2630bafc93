// Package rollout answers the operator's question "which clients still use
// legacy tasks, and can the bridge be removed?" from the bridge's rollout
// metrics (docs/METRICS.md): read from one bridge's /metrics, or from a
// Prometheus server over a window for a whole fleet. It backs
// `bridge rollout`.
//
// Sources ([FromMetricsText], [FetchMetrics], [QueryPrometheus]) only collect
// samples into a [Data]; [Decide], a pure function, turns them into the
// per-client table and the verdict.
package rollout

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// ExitLegacyRemains is the exit code of `bridge rollout` when legacy traffic
// remains (0 when the bridge can be removed, 1 on errors).
const ExitLegacyRemains = 4

// Sample is one series of a query result: its labels and value.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Data is what a source collected, as counts over the window (or since the
// bridge started, for a single /metrics).
type Data struct {
	// Source names where the data came from (a URL without credentials).
	Source string
	// Window is the Prometheus range ("7d"); empty for a single /metrics,
	// whose counters run since the bridge started.
	Window string
	// Replicas is the number of bridge instances the data covers.
	Replicas int

	// ClientRequests: tasksbridge_client_requests_total by era, client, version.
	ClientRequests []Sample
	// ClientLastSeen: tasksbridge_client_last_seen_timestamp_seconds by era,
	// client, version (Unix seconds).
	ClientLastSeen []Sample
	// LegacyCalls: tasksbridge_legacy_calls_total by client, method.
	LegacyCalls []Sample
	// Requests: tasksbridge_requests_total by client_era, method.
	Requests []Sample
	// TasksCreated: tasksbridge_tasks_created_total by direction.
	TasksCreated []Sample
}

// Row is one client (name, version, era) of the rollout table.
type Row struct {
	Client  string `json:"client"`
	Version string `json:"version"`
	Era     string `json:"era"`
	// Requests the client made in the window.
	Requests float64 `json:"requests"`
	// LegacyCalls is the client's share of its name's legacy task-protocol
	// calls (tasksbridge_legacy_calls_total has no version label, so a
	// name's calls are split over its legacy rows by request count).
	LegacyCalls float64 `json:"legacyCalls"`
	// LegacyShare is LegacyCalls / Requests (0..1); 0 for modern clients.
	LegacyShare float64 `json:"legacyShare"`
	// LastSeen is the client's last request; zero when unknown.
	LastSeen time.Time `json:"lastSeen,omitzero"`
}

// Totals are the fleet-wide figures behind the verdict.
type Totals struct {
	Requests        float64 `json:"requests"`
	LegacyRequests  float64 `json:"legacyRequests"`
	LegacyCalls     float64 `json:"legacyCalls"`
	LegacyTaskCalls float64 `json:"legacyTaskCalls"`
	ModernTaskCalls float64 `json:"modernTaskCalls"`
}

// Verdict is the answer: can the bridge be removed?
type Verdict struct {
	Removable bool `json:"removable"`
	// LegacyClients counts the distinct client names ("other" counts once)
	// with legacy activity.
	LegacyClients int `json:"legacyClients"`
	// LegacyTaskShare is legacy task calls ÷ all task traffic (0..1).
	LegacyTaskShare float64 `json:"legacyTaskShare"`
	// Line is the human verdict printed under the table.
	Line string `json:"line"`
}

// ExitCode is the exit code of `bridge rollout` for the verdict.
func (v Verdict) ExitCode() int {
	if v.Removable {
		return 0
	}
	return ExitLegacyRemains
}

// Report is the table and verdict.
type Report struct {
	Source   string  `json:"source"`
	Window   string  `json:"window"`
	Replicas int     `json:"replicas"`
	Clients  []Row   `json:"clients"`
	Totals   Totals  `json:"totals"`
	Verdict  Verdict `json:"verdict"`
}

// SinceStart is Report.Window for a single /metrics read.
const SinceStart = "since the bridge started"

// Decide builds the report from collected data. It is pure.
//
// Task traffic is every task-protocol call of either era: legacy task calls
// (tasksbridge_legacy_calls_total without initialize) plus modern task calls
// (tasksbridge_requests_total of modern clients on tasks/* methods, and
// tasksbridge_tasks_created_total in the modern_to_* directions, one per
// task-creating tools/call). The verdict is "can be removed" only when no
// legacy client was active at all: no legacy calls (initialize included), no
// requests of the legacy era, and no legacy-era client seen in the window.
func Decide(d Data) Report {
	r := Report{Source: d.Source, Window: d.Window, Replicas: d.Replicas}
	if r.Window == "" {
		r.Window = SinceStart
	}

	type key struct{ client, version, era string }
	rows := map[key]*Row{}
	row := func(s Sample) *Row {
		k := key{s.Labels["client"], s.Labels["version"], s.Labels["era"]}
		if rows[k] == nil {
			rows[k] = &Row{Client: k.client, Version: k.version, Era: k.era}
		}
		return rows[k]
	}
	for _, s := range d.ClientRequests {
		row(s).Requests += value(s)
	}
	for _, s := range d.ClientLastSeen {
		if v := value(s); v > 0 {
			t := time.Unix(0, int64(v*1e9)).UTC().Truncate(time.Second)
			if rw := row(s); t.After(rw.LastSeen) {
				rw.LastSeen = t
			}
		}
	}

	legacyByClient := map[string]float64{}
	for _, s := range d.LegacyCalls {
		v := value(s)
		legacyByClient[s.Labels["client"]] += v
		r.Totals.LegacyCalls += v
		if s.Labels["method"] != "initialize" {
			r.Totals.LegacyTaskCalls += v
		}
	}
	for _, s := range d.Requests {
		v := value(s)
		r.Totals.Requests += v
		switch s.Labels["client_era"] {
		case "legacy":
			r.Totals.LegacyRequests += v
		case "modern":
			if strings.HasPrefix(s.Labels["method"], "tasks/") {
				r.Totals.ModernTaskCalls += v
			}
		}
	}
	for _, s := range d.TasksCreated {
		if strings.HasPrefix(s.Labels["direction"], "modern_to_") {
			r.Totals.ModernTaskCalls += value(s)
		}
	}

	// Spread each name's legacy calls over its legacy rows by request count.
	legacyRows := map[string][]*Row{}
	for _, rw := range rows {
		if rw.Era == "legacy" {
			legacyRows[rw.Client] = append(legacyRows[rw.Client], rw)
		}
	}
	for client, calls := range legacyByClient {
		if calls <= 0 {
			continue
		}
		lrs := legacyRows[client]
		if len(lrs) == 0 { // calls without a clients row: show them anyway
			rw := &Row{Client: client, Era: "legacy"}
			rows[key{client, "", "legacy"}] = rw
			lrs = []*Row{rw}
		}
		slices.SortFunc(lrs, func(a, b *Row) int { return cmp.Compare(a.Version, b.Version) })
		var req float64
		for _, rw := range lrs {
			req += rw.Requests
		}
		for _, rw := range lrs {
			switch {
			case req > 0:
				rw.LegacyCalls = calls * rw.Requests / req
			case rw == lrs[0]:
				rw.LegacyCalls = calls
			}
		}
	}

	legacyClients := map[string]bool{}
	for client, calls := range legacyByClient {
		if calls > 0 {
			legacyClients[client] = true
		}
	}
	for _, rw := range rows {
		if rw.Requests <= 0 && rw.LegacyCalls <= 0 && rw.LastSeen.IsZero() {
			continue // a series without activity in the window (increase 0)
		}
		switch {
		case rw.Requests > 0:
			rw.LegacyShare = math.Min(1, rw.LegacyCalls/rw.Requests)
		case rw.LegacyCalls > 0:
			rw.LegacyShare = 1
		}
		if rw.Era == "legacy" && (rw.Requests > 0 || rw.LegacyCalls > 0 || !rw.LastSeen.IsZero()) {
			legacyClients[rw.Client] = true
		}
		r.Clients = append(r.Clients, *rw)
	}
	slices.SortFunc(r.Clients, func(a, b Row) int {
		if a.Era != b.Era { // legacy first: they are what the operator is after
			if a.Era == "legacy" {
				return -1
			}
			if b.Era == "legacy" {
				return 1
			}
		}
		return cmp.Or(cmp.Compare(b.Requests, a.Requests), cmp.Compare(a.Client, b.Client),
			cmp.Compare(a.Version, b.Version), cmp.Compare(a.Era, b.Era))
	})
	if r.Clients == nil {
		r.Clients = []Row{}
	}

	r.Verdict = verdict(r.Totals, len(legacyClients))
	return r
}

func verdict(t Totals, legacyClients int) Verdict {
	v := Verdict{LegacyClients: legacyClients}
	if traffic := t.LegacyTaskCalls + t.ModernTaskCalls; traffic > 0 {
		v.LegacyTaskShare = t.LegacyTaskCalls / traffic
	}
	if legacyClients == 0 && t.LegacyCalls <= 0 && t.LegacyRequests <= 0 {
		v.Removable = true
		v.Line = "no legacy task traffic: the bridge can be removed"
		if t.Requests <= 0 {
			v.Line += " (no client requests at all)"
		}
		return v
	}
	n := max(legacyClients, 1) // legacy requests without client names still mean one
	clients, verb := "clients", "use"
	if n == 1 {
		clients, verb = "client", "uses"
	}
	if t.LegacyTaskCalls > 0 {
		v.Line = fmt.Sprintf("%d %s still %s legacy tasks (%s of task traffic)", n, clients, verb, percent(v.LegacyTaskShare))
	} else {
		v.Line = fmt.Sprintf("%d %s still %s the legacy protocol (no legacy task calls): the bridge is still needed", n, clients, verb)
	}
	return v
}

// percent formats a 0..1 share; a non-zero share never rounds to 0%.
func percent(f float64) string {
	switch {
	case f > 0 && f < 0.01:
		return "<1%"
	case f < 1 && f > 0.99:
		return ">99%"
	}
	return fmt.Sprintf("%.0f%%", f*100)
}

// value is a sample's value, with NaN and negatives (counter resets seen
// through arithmetic) as 0.
func value(s Sample) float64 {
	if math.IsNaN(s.Value) || s.Value < 0 || math.IsInf(s.Value, 0) {
		return 0
	}
	return s.Value
}
