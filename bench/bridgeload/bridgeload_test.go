package bridgeload

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/internal/testkit/schemacheck"
)

func ms(v ...int) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, x := range v {
		out[i] = time.Duration(x) * time.Millisecond
	}
	return out
}

func TestSummarizeNearestRank(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- { // unsorted input
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	s := Summarize(d)
	want := Summary{N: 100, Min: time.Millisecond, P50: 50 * time.Millisecond, P90: 90 * time.Millisecond,
		P99: 99 * time.Millisecond, Max: 100 * time.Millisecond, Mean: 50500 * time.Microsecond}
	if s != want {
		t.Fatalf("Summarize(1..100 ms) = %+v, want %+v", s, want)
	}
	if d[0] != 100*time.Millisecond {
		t.Fatal("Summarize sorted its input in place")
	}
	if got := Summarize(ms(7)); got.P50 != 7*time.Millisecond || got.P99 != 7*time.Millisecond {
		t.Fatalf("one sample: %+v", got)
	}
	if got := Summarize(nil); got != (Summary{}) {
		t.Fatalf("no samples: %+v", got)
	}
	if got := Percentile(ms(1, 2, 3), 99); got != 3*time.Millisecond {
		t.Fatalf("p99 of 3 samples = %v, want the largest", got)
	}
	if got := Percentile(ms(1, 2, 3, 4), 50); got != 2*time.Millisecond {
		t.Fatalf("p50 of 4 samples = %v, want the 2nd", got)
	}
}

func TestParseStatus(t *testing.T) {
	const status = "Name:\tbridge\nVmPeak:\t  900 kB\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\nThreads:\t5\n"
	m, err := parseStatus(strings.NewReader(status))
	if err != nil || m.RSS != 1024<<10 || m.HWM != 2048<<10 {
		t.Fatalf("parseStatus = %+v, %v", m, err)
	}
	if _, err := parseStatus(strings.NewReader("VmRSS:\t12 MB\nVmHWM:\t1 kB\n")); err == nil {
		t.Fatal("a unit other than kB was accepted")
	}
	if _, err := parseStatus(strings.NewReader("Name:\tx\n")); err == nil {
		t.Fatal("a status without VmRSS was accepted")
	}
	if m, err := ReadMem(os.Getpid()); err == nil && (m.RSS <= 0 || m.HWM < m.RSS) {
		t.Fatalf("own memory: %+v", m) // only where /proc exists
	}
}

func TestParseStat(t *testing.T) {
	// A command name with a space and a parenthesis; utime 150, stime 25 ticks.
	const stat = "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 500 0 0 0 150 25 0 0 20 0 3 0 100 1000 50"
	if d, err := parseStat(stat); err != nil || d != 1750*time.Millisecond {
		t.Fatalf("parseStat = %v, %v; want 1.75s", d, err)
	}
	if _, err := parseStat("4242 (x) S 1 2"); err == nil {
		t.Fatal("a truncated stat line was accepted")
	}
	if d, err := ReadCPU(os.Getpid()); err == nil && d < 0 {
		t.Fatalf("own CPU time %v", d)
	}
}

// The requests the clients build are valid messages of their era.
func TestRequestsMatchSchemas(t *testing.T) {
	v := schemacheck.Load(t)
	v.Check(t, schemacheck.Modern, "CallToolRequest", envelope(3, "tools/call", WithMeta(echoParams)))
	v.Check(t, schemacheck.Legacy, "CallToolRequest", envelope(4, "tools/call", echoParams))
	v.Check(t, schemacheck.Legacy, "CallToolRequest", envelope(5, "tools/call", longTaskParams))
	v.Check(t, schemacheck.Legacy, "InitializedNotification", envelope(-1, "notifications/initialized", nil))
	if got := string(WithMeta([]byte(`{}`))); !strings.HasPrefix(got, `{"_meta":{`) || !json.Valid([]byte(got)) {
		t.Fatalf("WithMeta({}) = %s", got)
	}
}

func TestReadSSE(t *testing.T) {
	stream := ": keep-alive\n\n" +
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n" +
		": keep-alive\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n\n" + // another request's answer
		"data: {\"jsonrpc\":\"2.0\",\n" + "data: \"id\":7,\"result\":{\"ok\":true}}\n\n" +
		"data: never read\n\n"
	var r Reply
	comments := 0
	if err := readSSE(strings.NewReader(stream), 7, &r, Hooks{Comment: func() { comments++ }}); err != nil {
		t.Fatalf("readSSE: %v", err)
	}
	if string(r.Result) != `{"ok":true}` || r.Err != nil || r.Comments != 2 || comments != 2 {
		t.Fatalf("reply %+v, hook saw %d comments", r, comments)
	}
	err := readSSE(strings.NewReader(": keep-alive\n\n"), 7, &Reply{}, Hooks{})
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("stream ended without the answer: %v", err)
	}
	r = Reply{}
	if err := readSSE(strings.NewReader("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":\"no\"}}\n\n"), 1, &r, Hooks{}); err != nil || r.Err == nil || r.Err.Code != -32602 {
		t.Fatalf("error answer: %+v %v", r, err)
	}
}

func TestPostRejectsNonMCPAnswers(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusForbidden)
	}))
	defer hs.Close()
	_, err := post(context.Background(), hs.Client(), hs.URL, http.Header{}, envelope(1, "ping", nil), 1, Hooks{})
	if err == nil || !strings.Contains(err.Error(), "HTTP 403") {
		t.Fatalf("post to a 403: %v", err)
	}
}

// TestScenariosSmoke runs every scenario at toy size against an in-process
// bridge, checking the harness's own logic (answers counted, tasks mapped,
// counters read), not the timings.
func TestScenariosSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	up, err := StartUpstream(ctx, demo.Options{PollInterval: 20 * time.Millisecond, DisablePush: true})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	br, err := StartBridge(BridgeOptions{Upstream: up.URL, KeepAlive: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := br.Close(); err != nil {
			t.Errorf("bridge close: %v", err)
		}
	}()

	hc := NewHTTPClient(4)
	defer hc.CloseIdleConnections()
	l, err := DialLegacy(ctx, hc, br.URL)
	if err != nil {
		t.Fatal(err)
	}
	direct, bridged := ModernEcho(NewModern(hc, up.URL)), LegacyEcho(l)
	d, b, err := EchoLatency(ctx, direct, bridged, 1, 2, 3)
	if err != nil || d.N != 6 || b.N != 6 {
		t.Fatalf("EchoLatency: %v, %d direct and %d bridged samples, want 6 each", err, d.N, b.N)
	}
	ts, err := CompareThroughput(ctx, []Path{{Workers: []Echo{direct}}, {Workers: []Echo{bridged}, Pid: os.Getpid()}}, 2, 20*time.Millisecond)
	if err != nil || len(ts) != 2 {
		t.Fatalf("CompareThroughput: %v, %+v", err, ts)
	}
	for i, x := range ts {
		if x.Calls == 0 || x.Errors != 0 || x.Elapsed < 40*time.Millisecond || x.CPU <= 0 || x.CPUPerCall() <= 0 {
			t.Fatalf("CompareThroughput path %d: %+v", i, x)
		}
	}
	if ts[0].ProxyCPU != 0 || ts[1].ProxyCPU < 0 || ts[1].ProxyCPU > ts[1].CPU {
		t.Fatalf("CompareThroughput: proxy CPU direct %v, bridged %v of %v", ts[0].ProxyCPU, ts[1].ProxyCPU, ts[1].CPU)
	}
	if _, err := CompareThroughput(ctx, []Path{{Workers: []Echo{direct}}, {}}, 1, time.Millisecond); err == nil {
		t.Fatal("CompareThroughput with unequal worker counts was accepted")
	}

	s, err := IdleSessions(ctx, br.URL, os.Getpid(), 5)
	if err != nil || s.Opened != 5 || s.Refused != 0 || s.Loaded.RSS == 0 || s.RuntimeLoaded.Goroutines == 0 {
		t.Fatalf("IdleSessions: %v, %+v", err, s)
	}

	g, err := GetRate(ctx, up, br.URL, 3, 100*time.Millisecond)
	if err != nil || g.Errors != 0 || g.GetsOne == 0 || g.GetsMany == 0 {
		t.Fatalf("GetRate: %v, %+v", err, g)
	}

	r, err := ResultDelay(ctx, up, br.URL, 2)
	// A poll already in flight when the task completes answers without a
	// cadence sample, so a sample may have no cadence split (N ≤ 2).
	if err != nil || r.Errors != 0 || r.Delays.N != 2 || r.Push || r.Cadence.N > 2 ||
		(r.Cadence.N == 2 && r.Cadence.Max+r.Processing.Min > r.Delays.Max) {
		t.Fatalf("ResultDelay (poll): %v, %+v", err, r)
	}

	w, err := ManyWaiters(ctx, up, br.URL, os.Getpid(), 2, 3, 4, 10*time.Millisecond, nil)
	if err != nil || w.Waiters != 6 || w.Blocked != 6 || w.Answered != 6 || w.Errors != 0 ||
		w.Idle.RSS == 0 || w.Loaded.RSS == 0 || w.Runtime.Goroutines <= w.RuntimeIdle.Goroutines {
		t.Fatalf("ManyWaiters: %v, %+v", err, w)
	}

	// A wrong answer is an error, not a sample.
	if err := checkResult(&Reply{Result: json.RawMessage(`{"content":[{"type":"text","text":"other"}]}`)}, nil); err == nil {
		t.Fatal("a tasks/result with the wrong text passed the check")
	}
	if err := checkEcho(&Reply{Result: json.RawMessage(`{"content":[{"type":"text","text":"` + echoText + `"}],"isError":true}`)}, nil); err == nil {
		t.Fatal("an isError echo passed the check")
	}
}

// ManyTasks at toy size, push on: every wait is answered, and the bridge
// shares upstream listens among the load's tasks (one upstream session),
// apart from the probe principal's, instead of one per task.
func TestManyTasksSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	up, err := StartUpstream(ctx, demo.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	br, err := StartBridge(BridgeOptions{Upstream: up.URL, KeepAlive: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := br.Close(); err != nil {
			t.Errorf("bridge close: %v", err)
		}
	}()
	r, err := ManyTasks(ctx, up, br.URL, os.Getpid(), 12, 4, 4, 10*time.Millisecond, 3, nil)
	if err != nil || r.Waits != 12 || r.Sessions != 3 || r.Blocked != 12 || r.Answered != 12 || r.Errors != 0 ||
		r.ProbeGet.N != 3 || r.ProbeCall.N != 3 || r.SettleGet.N != 3 || r.SettleCall.N != 3 || r.ProbeErrors != 0 || r.Loaded.RSS == 0 || r.FDsLoaded <= r.FDsBase {
		t.Fatalf("ManyTasks: %v, %+v", err, r)
	}
	// One listen per session, two while one replaces the other, a third
	// while the replaced one's request is still ending upstream; one listen
	// per task would be 13.
	if r.StreamsPeak > 4 {
		t.Fatalf("upstream listens open at once: %d for 12 tasks of one session and the probe's, want ≤ 4", r.StreamsPeak)
	}
}
