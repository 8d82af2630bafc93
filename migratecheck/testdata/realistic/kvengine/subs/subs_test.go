package subs

import "testing"

type event struct {
	Method string
}

func TestFilter(t *testing.T) {
	f := NewFilter("notifications/tasks")
	for _, ev := range []event{{Method: "notifications/tasks/status"}, {Method: "tasks/list"}} {
		if f.Match(ev.Method) != (ev.Method == "notifications/tasks/status") {
			t.Errorf("%s", ev.Method)
		}
	}
}
