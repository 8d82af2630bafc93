package era_test

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/tasksbridge/tasksbridge/era"
)

// The client-era rule on every case of testdata/client.txtar.
func TestClientTranscripts(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/client.txtar")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	var names []string
	reqs := map[string][]byte{}
	for _, f := range ar.Files {
		switch {
		case strings.HasSuffix(f.Name, ".request"):
			name := strings.TrimSuffix(f.Name, ".request")
			names = append(names, name)
			reqs[name] = f.Data
		case strings.HasSuffix(f.Name, ".era"):
			want[strings.TrimSuffix(f.Name, ".era")] = strings.TrimSpace(string(f.Data))
		default:
			t.Fatalf("unexpected section %q", f.Name)
		}
	}
	if len(names) < 15 || len(want) != len(names) {
		t.Fatalf("%d requests, %d eras: every request needs its era", len(names), len(want))
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			r := parseRequest(t, reqs[name])
			if got := era.Client(r); got.String() != want[name] {
				t.Fatalf("Client = %v, want %s", got, want[name])
			}
		})
	}
}

// parseRequest reads a .request section: header lines, a blank line, the
// body.
func parseRequest(t *testing.T, data []byte) era.Request {
	t.Helper()
	var r era.Request
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, ": ")
		switch {
		case !ok:
			t.Fatalf("bad header line %q", line)
		case k == "MCP-Protocol-Version":
			r.Version = v
		case k == "Mcp-Session-Id":
			r.SessionID = v
		case k == "Known-Legacy-Session" && v == "yes":
			r.KnownLegacySession = func() bool { return true }
		default:
			t.Fatalf("unknown header %q", k)
		}
	}
	var body []byte
	for sc.Scan() {
		body = append(append(body, sc.Bytes()...), '\n')
	}
	r.Body = era.BodySignals(body)
	return r
}

// The rule's table, on Signals directly: every shape of body with and
// without each header.
func TestClientTable(t *testing.T) {
	obj := func(method string) era.Signals {
		return era.Signals{Body: era.BodyObject, Method: method, HasMethod: true}
	}
	meta := obj("tools/list")
	meta.MetaProtocolVersion = true
	const M, L = era.Modern, era.Legacy
	for _, tc := range []struct {
		name    string
		version string
		session string
		known   bool
		body    era.Signals
		want    era.Era
	}{
		{"empty", "", "", false, era.Signals{Body: era.BodyEmpty}, L},
		{"empty modern header", "2026-07-28", "", false, era.Signals{Body: era.BodyEmpty}, M},
		{"empty old header", "2025-11-25", "", false, era.Signals{Body: era.BodyEmpty}, L},
		{"empty modern header with session", "2026-07-28", "s", false, era.Signals{Body: era.BodyEmpty}, L},
		{"other modern header", "2026-07-28", "", false, era.Signals{Body: era.BodyOther}, L},
		{"malformed", "", "", false, era.Signals{Body: era.BodyMalformed}, L},
		{"malformed modern header", "2026-07-28", "s", false, era.Signals{Body: era.BodyMalformed}, M},
		{"malformed old header", "2025-06-18", "", false, era.Signals{Body: era.BodyMalformed}, L},
		{"response", "2026-07-28", "", false, era.Signals{Body: era.BodyObject}, L},
		{"meta", "", "", false, meta, M},
		{"meta old header", "2025-11-25", "", false, meta, M},
		{"meta with unknown session", "", "s", false, meta, M},
		{"meta with known legacy session", "", "s", true, meta, L},
		{"discover", "", "", false, obj("server/discover"), M},
		{"discover with known legacy session", "", "s", true, obj("server/discover"), L},
		{"initialize modern header", "2026-07-28", "", false, obj("initialize"), L},
		{"call modern header", "2026-07-28", "", false, obj("tools/call"), M},
		{"call later header", "2030-01-01", "", false, obj("tools/call"), M},
		{"call old header", "2025-11-25", "", false, obj("tools/call"), L},
		{"call no header", "", "", false, obj("tools/call"), L},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			r := era.Request{Version: tc.version, SessionID: tc.session, Body: tc.body,
				KnownLegacySession: func() bool { asked = true; return tc.known }}
			if got := era.Client(r); got != tc.want {
				t.Fatalf("Client = %v, want %v", got, tc.want)
			}
			// The session lookup is paid only where it can change the answer.
			if wantAsk := tc.session != "" && (tc.want == M || tc.known); asked != wantAsk {
				t.Fatalf("KnownLegacySession asked %v, want %v", asked, wantAsk)
			}
		})
	}
}

// BodySignals reads the members the rule needs, whatever else the body has.
func TestBodySignals(t *testing.T) {
	for body, want := range map[string]era.Signals{
		"":                                       {Body: era.BodyEmpty},
		" \n\t":                                  {Body: era.BodyEmpty},
		"[{}]":                                   {Body: era.BodyOther},
		"42":                                     {Body: era.BodyOther},
		"{x":                                     {Body: era.BodyMalformed},
		`{"method":7}`:                           {Body: era.BodyMalformed},
		`{"method":"a","params":[]}`:             {Body: era.BodyMalformed},
		`{"method":"a","params":{"_meta":[]}}`:   {Body: era.BodyMalformed},
		`{"method":null}`:                        {Body: era.BodyObject},
		`{"id":1,"result":{}}`:                   {Body: era.BodyObject},
		`{"method":"a","params":{"_meta":null}}`: {Body: era.BodyObject, Method: "a", HasMethod: true},
		`{"METHOD":"server/discover"}`:           {Body: era.BodyObject, Method: "server/discover", HasMethod: true},
		`{"method":"a","params":{"_META":{"io.modelcontextprotocol/protocolVersion":1}}}`: {Body: era.BodyObject, Method: "a", HasMethod: true, MetaProtocolVersion: true},
	} {
		if got := era.BodySignals([]byte(body)); got != want {
			t.Errorf("BodySignals(%q) = %+v, want %+v", body, got, want)
		}
	}
}

// FuzzClient: any header and body get a decided era, never a panic.
func FuzzClient(f *testing.F) {
	f.Add("", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	f.Add("2026-07-28", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	f.Add("2025-11-25", "s", `[{"jsonrpc":"2.0"}]`)
	f.Add("2026-07-28", "s", `{"method":null,"params":[]}`)
	f.Fuzz(func(t *testing.T, version, session, body string) {
		e := era.Client(era.Request{Version: version, SessionID: session, Body: era.BodySignals([]byte(body))})
		if !e.Valid() {
			t.Fatalf("era %v", e)
		}
	})
}
