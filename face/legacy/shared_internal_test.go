package legacyface

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/tasksbridge/tasksbridge/modern"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// Options are shared only when equal in every field: a field added to
// CallOptions or to the capabilities must be compared by sameOptions too,
// or two requests that differ in it would share one copy.
func TestSameOptionsComparesEveryField(t *testing.T) {
	if n := reflect.TypeFor[modernup.CallOptions]().NumField(); n != callOptionsFields {
		t.Errorf("CallOptions has %d fields, sameOptions compares %d", n, callOptionsFields)
	}
	if n := reflect.TypeFor[modern.ClientCapabilities]().NumField(); n != clientCapsFields {
		t.Errorf("ClientCapabilities has %d fields, sameOptions compares %d", n, clientCapsFields)
	}
	info := &modern.Implementation{Name: "c"}
	caps := modern.TasksCapabilities()
	base := modernup.CallOptions{Authorization: "Bearer a", ClientInfo: info, LogLevel: "info", Capabilities: caps,
		Header: http.Header{"X-Forwarded-For": {"192.0.2.1"}}}
	if !sameOptions(base, base) {
		t.Fatal("options differ from themselves")
	}
	same := base
	same.Header = http.Header{"X-Forwarded-For": {"192.0.2.1"}}
	if !sameOptions(base, same) {
		t.Error("equal forwarded headers in two maps: not the same options")
	}
	for name, change := range map[string]func(*modernup.CallOptions){
		"credential":   func(o *modernup.CallOptions) { o.Authorization = "Bearer b" },
		"no header":    func(o *modernup.CallOptions) { o.Header = nil },
		"header value": func(o *modernup.CallOptions) { o.Header = http.Header{"X-Forwarded-For": {"192.0.2.2"}} },
		"client info":  func(o *modernup.CallOptions) { o.ClientInfo = &modern.Implementation{Name: "c"} },
		"log level":    func(o *modernup.CallOptions) { o.LogLevel = "debug" },
		"stamped":      func(o *modernup.CallOptions) { o.Stamped = true },
		"on notify":    func(o *modernup.CallOptions) { o.OnNotify = func(string, json.RawMessage) {} },
		"capabilities": func(o *modernup.CallOptions) { o.Capabilities = modern.TasksCapabilities() },
		"elicitation":  func(o *modernup.CallOptions) { o.Capabilities.Elicitation = &modern.Object{} },
	} {
		o := base
		change(&o)
		if sameOptions(base, o) {
			t.Errorf("options with another %s count as the same", name)
		}
	}
}

// A session shares one copy of equal options among its requests' bindings,
// and a request with other options (another credential) gets its own.
func TestShareOptsPerSession(t *testing.T) {
	s := &session{}
	o := modernup.CallOptions{Authorization: "Bearer a", OnNotify: func(string, json.RawMessage) {}}
	p1 := s.shareOpts(o)
	if p1.OnNotify != nil {
		t.Error("shared options keep a request's OnNotify")
	}
	if p2 := s.shareOpts(o); p2 != p1 {
		t.Error("equal options of one session are not shared")
	}
	o.Authorization = "Bearer b"
	p3 := s.shareOpts(o)
	if p3 == p1 || p3.Authorization != "Bearer b" || p1.Authorization != "Bearer a" {
		t.Errorf("another credential shares a copy: %q, first %q", p3.Authorization, p1.Authorization)
	}
	if other := (&session{}).shareOpts(o); other == p3 {
		t.Error("two sessions share options")
	}
}
