package mcpio

import (
	"encoding/json"
	"testing"
)

// Raw params keep the bytes as sent (a copy: go-sdk reuses its buffer);
// only RawParamsMeta shows go-sdk the _meta; a raw result is its bytes.
func TestRawParamsAndResult(t *testing.T) {
	in := []byte(`{"taskId":"t1","_meta":{"progressToken":7}}`)
	var p RawParams
	if err := json.Unmarshal(in, &p); err != nil {
		t.Fatal(err)
	}
	in[2] = 'X'
	if string(p.Bytes()) != `{"taskId":"t1","_meta":{"progressToken":7}}` || p.GetMeta() != nil {
		t.Errorf("RawParams: %s, meta %v", p.Bytes(), p.GetMeta())
	}
	var nilP *RawParams
	if nilP.Bytes() != nil {
		t.Error("nil RawParams has bytes")
	}
	var pm RawParamsMeta
	if err := json.Unmarshal([]byte(`{"_meta":{"k":"v"}}`), &pm); err != nil {
		t.Fatal(err)
	}
	if pm.GetMeta()["k"] != "v" || string(pm.Bytes()) != `{"_meta":{"k":"v"}}` {
		t.Errorf("RawParamsMeta: %s, meta %v", pm.Bytes(), pm.GetMeta())
	}
	b, err := json.Marshal(&RawResult{JSON: json.RawMessage(`{"a":1}`)})
	if err != nil || string(b) != `{"a":1}` {
		t.Errorf("RawResult: %s %v", b, err)
	}
}
