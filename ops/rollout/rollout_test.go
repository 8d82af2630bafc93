package rollout

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

func s(v float64, kv ...string) Sample {
	l := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	return Sample{Labels: l, Value: v}
}

// TestVerdict is the table of the verdict logic (pure): when can the bridge
// be removed, and what does the line say.
func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		name          string
		d             Data
		removable     bool
		legacyClients int
		line          string
	}{
		{
			name: "no traffic at all", removable: true,
			line: "no legacy task traffic: the bridge can be removed (no client requests at all)",
		},
		{
			name: "modern only", removable: true,
			d: Data{
				ClientRequests: []Sample{s(10, "client", "inspector", "version", "1", "era", "modern")},
				Requests:       []Sample{s(4, "client_era", "modern", "method", "tasks/get"), s(6, "client_era", "modern", "method", "tools/call")},
				TasksCreated:   []Sample{s(3, "direction", "modern_to_legacy")},
			},
			line: "no legacy task traffic: the bridge can be removed",
		},
		{
			name: "old legacy series with zero increase do not block removal", removable: true,
			d: Data{
				ClientRequests: []Sample{s(0, "client", "old", "version", "1", "era", "legacy"), s(5, "client", "new", "version", "2", "era", "modern")},
				LegacyCalls:    []Sample{s(0, "client", "old", "method", "tasks/result")},
				Requests:       []Sample{s(0, "client_era", "legacy", "method", "tasks/result"), s(5, "client_era", "modern", "method", "tools/call")},
			},
			line: "no legacy task traffic: the bridge can be removed",
		},
		{
			name: "three legacy clients, 41% of task traffic", legacyClients: 3,
			d: Data{
				LegacyCalls: []Sample{
					s(5, "client", "a", "method", "initialize"), // not task traffic
					s(20, "client", "a", "method", "tasks/result"),
					s(11, "client", "b", "method", "tools/call"),
					s(10, "client", "other", "method", "tasks/get"),
				},
				Requests: []Sample{
					s(46, "client_era", "legacy", "method", "tasks/get"),
					s(40, "client_era", "modern", "method", "tasks/get"),
					s(9, "client_era", "modern", "method", "tools/call"), // not task traffic by itself
				},
				TasksCreated: []Sample{s(19, "direction", "modern_to_modern"), s(7, "direction", "legacy_to_modern")},
			},
			line: "3 clients still use legacy tasks (41% of task traffic)",
		},
		{
			name: "legacy client without task calls still needs the bridge", legacyClients: 1,
			d: Data{
				ClientRequests: []Sample{s(3, "client", "a", "version", "1", "era", "legacy")},
				LegacyCalls:    []Sample{s(1, "client", "a", "method", "initialize")},
				Requests:       []Sample{s(1, "client_era", "legacy", "method", "initialize"), s(2, "client_era", "legacy", "method", "tools/list")},
			},
			line: "1 client still uses the legacy protocol (no legacy task calls): the bridge is still needed",
		},
		{
			// increase() of a series born in the window with one sample is 0:
			// the last-seen gauge still shows the client.
			name: "legacy client seen once in the window", legacyClients: 1,
			d: Data{
				ClientRequests: []Sample{s(0, "client", "a", "version", "1", "era", "legacy")},
				ClientLastSeen: []Sample{s(1779999000, "client", "a", "version", "1", "era", "legacy")},
			},
			line: "1 client still uses the legacy protocol (no legacy task calls): the bridge is still needed",
		},
		{
			name: "legacy requests without client names", legacyClients: 0,
			d:    Data{Requests: []Sample{s(2, "client_era", "legacy", "method", "tasks/get")}},
			line: "1 client still uses the legacy protocol (no legacy task calls): the bridge is still needed",
		},
		{
			name: "a sliver of legacy traffic is not 0%", legacyClients: 1,
			d: Data{
				LegacyCalls: []Sample{s(1, "client", "a", "method", "tasks/get")},
				Requests:    []Sample{s(999, "client_era", "modern", "method", "tasks/get")},
			},
			line: "1 client still uses legacy tasks (<1% of task traffic)",
		},
		{
			name: "all task traffic legacy", legacyClients: 2,
			d: Data{
				LegacyCalls: []Sample{s(1, "client", "a", "method", "tasks/get"), s(math.NaN(), "client", "c", "method", "tasks/get"), s(3, "client", "b", "method", "tasks/list")},
			},
			line: "2 clients still use legacy tasks (100% of task traffic)",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Decide(c.d)
			v := r.Verdict
			if v.Removable != c.removable || v.LegacyClients != c.legacyClients || v.Line != c.line {
				t.Errorf("verdict %+v, want removable=%v legacyClients=%d line %q", v, c.removable, c.legacyClients, c.line)
			}
			want := ExitLegacyRemains
			if c.removable {
				want = 0
			}
			if v.ExitCode() != want {
				t.Errorf("exit code %d, want %d", v.ExitCode(), want)
			}
		})
	}
}

// TestDecideRows: per-client rows, legacy share split over versions, calls
// without a clients row, inactive rows dropped, legacy rows first.
func TestDecideRows(t *testing.T) {
	r := Decide(Data{
		Source: "test", Replicas: 1,
		ClientRequests: []Sample{
			s(30, "client", "a", "version", "1", "era", "legacy"),
			s(10, "client", "a", "version", "2", "era", "legacy"),
			s(100, "client", "a", "version", "3", "era", "modern"),
			s(0, "client", "gone", "version", "1", "era", "legacy"),
		},
		ClientLastSeen: []Sample{s(1780000000.9, "client", "a", "version", "1", "era", "legacy")},
		LegacyCalls: []Sample{
			s(20, "client", "a", "method", "tasks/result"), s(4, "client", "a", "method", "initialize"),
			s(6, "client", "nameless", "method", "tasks/get"),
		},
	})
	want := []Row{
		{Client: "a", Version: "1", Era: "legacy", Requests: 30, LegacyCalls: 18, LegacyShare: 0.6, LastSeen: time.Unix(1780000000, 0).UTC()},
		{Client: "a", Version: "2", Era: "legacy", Requests: 10, LegacyCalls: 6, LegacyShare: 0.6},
		{Client: "nameless", Version: "", Era: "legacy", Requests: 0, LegacyCalls: 6, LegacyShare: 1},
		{Client: "a", Version: "3", Era: "modern", Requests: 100},
	}
	if len(r.Clients) != len(want) {
		t.Fatalf("rows %+v", r.Clients)
	}
	for i := range want {
		g, w := r.Clients[i], want[i]
		if g.Client != w.Client || g.Version != w.Version || g.Era != w.Era || g.Requests != w.Requests ||
			math.Abs(g.LegacyCalls-w.LegacyCalls) > 1e-9 || math.Abs(g.LegacyShare-w.LegacyShare) > 1e-9 || !g.LastSeen.Equal(w.LastSeen) {
			t.Errorf("row %d = %+v, want %+v", i, g, w)
		}
	}
	if r.Window != SinceStart || r.Verdict.LegacyClients != 2 {
		t.Errorf("window %q, legacy clients %d", r.Window, r.Verdict.LegacyClients)
	}
}

func TestWriteText(t *testing.T) {
	r := Decide(Data{
		Source: "http://127.0.0.1:9/metrics", Replicas: 1,
		ClientRequests: []Sample{s(4, "client", "claude-code", "version", "1.2.0", "era", "legacy"), s(2, "client", "inspector", "version", "0.9", "era", "modern")},
		ClientLastSeen: []Sample{s(1780000000, "client", "claude-code", "version", "1.2.0", "era", "legacy")},
		LegacyCalls:    []Sample{s(1, "client", "claude-code", "method", "initialize"), s(2, "client", "claude-code", "method", "tasks/result")},
		Requests:       []Sample{s(4, "client_era", "legacy", "method", "tasks/result"), s(1, "client_era", "modern", "method", "tasks/get")},
	})
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	want := `source: http://127.0.0.1:9/metrics (since the bridge started, 1 replica)

CLIENT       VERSION  ERA     REQUESTS  LEGACY SHARE  LAST SEEN
claude-code  1.2.0    legacy  4         75%           2026-05-28T20:26:40Z
inspector    0.9      modern  2         -             -

1 client still uses legacy tasks (67% of task traffic)
`
	if b.String() != want {
		t.Errorf("text output:\n%s\nwant:\n%s", b.String(), want)
	}

	b.Reset()
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Clients []map[string]any `json:"clients"`
		Verdict Verdict          `json:"verdict"`
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Verdict != r.Verdict || len(back.Clients) != 2 || back.Clients[0]["lastSeen"] != "2026-05-28T20:26:40Z" {
		t.Errorf("JSON round trip: %s", b.String())
	}
	if _, ok := back.Clients[1]["lastSeen"]; ok || !strings.Contains(b.String(), `"legacyShare": 0.75`) {
		t.Errorf("JSON: zero lastSeen must be omitted, shares as fractions: %s", b.String())
	}
}
