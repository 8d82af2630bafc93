package astq

import (
	"reflect"
	"testing"
)

func TestTagKeys(t *testing.T) {
	for tag, want := range map[string][]string{
		`json:"ttl"`: {"json"},
		`theorydb:"attr:ttl,omitempty" json:"ttl"`: {"theorydb", "json"},
		`db:"ttl" json:"ttl" yaml:"ttl"`:           {"db", "json", "yaml"},
		`json:"a\"b" bson:"x"`:                     {"json", "bson"},
		``:                                         nil,
	} {
		if got := TagKeys(tag); !reflect.DeepEqual(got, want) {
			t.Errorf("TagKeys(%q) = %v, want %v", tag, got, want)
		}
	}
}

func TestJSONNameAndTaskShaped(t *testing.T) {
	if n, ok := JSONName(`db:"x" json:"pollInterval,omitempty"`); !ok || n != "pollInterval" {
		t.Errorf("JSONName = %q %v", n, ok)
	}
	if _, ok := JSONName(`db:"x"`); ok {
		t.Error("JSONName found a json key in a db-only tag")
	}
	shaped := map[string]bool{"taskId": true, "status": true, "ttl": true}
	if !TaskShaped(shaped) {
		t.Error("taskId+status+ttl is task-shaped (R2)")
	}
	for _, keys := range []map[string]bool{
		{"taskId": true, "status": true},                    // no third key
		{"id": true, "status": true, "createdAt": true},     // A2A
		{"status": true, "pollInterval": true, "ttl": true}, // Kubernetes-style
	} {
		if TaskShaped(keys) {
			t.Errorf("TaskShaped(%v) = true", keys)
		}
	}
}
