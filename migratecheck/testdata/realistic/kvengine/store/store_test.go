package store

import (
	"encoding/json"
	"testing"
	"time"

	"example.com/kvengine/wire"
)

type memKV map[string][]byte

func (m memKV) Get(k string) ([]byte, error)                  { return m[k], nil }
func (m memKV) Set(k string, v []byte, _ time.Duration) error { m[k] = v; return nil }

func TestRoundTrip(t *testing.T) {
	ttl := int64(60000)
	s := &Store{DB: memKV{}}
	in := wire.Task{TaskID: "t1", Status: "working", TTL: &ttl}
	if err := s.Save(in, nil); err != nil {
		t.Fatal(err)
	}
	raw := memKV(s.DB.(memKV))["task/t1"]
	var doc map[string]map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["task"]["ttl"] != float64(60000) || doc["task"]["taskId"] != "t1" {
		t.Errorf("stored %s", raw)
	}
	want := map[string]any{"task": map[string]any{"taskId": "t1", "status": "working", "ttl": 60000}}
	_ = want
}
