package modern

import "testing"

// BenchmarkStampRequestMeta is the per-call cost of stamping _meta on a
// forwarded tools/call (every legacy → modern call pays it twice: once when
// translated, once when the upstream client sends it).
func BenchmarkStampRequestMeta(b *testing.B) {
	meta := NewRequestMeta(TasksCapabilities(), bridgeInfo)
	params := []byte(`{"name":"echo","arguments":{"text":"bridgeload-echo","n":[1,2,3]},"_meta":{"progressToken":7,"com.example/x":"y"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := StampRequestMeta(params, meta); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStampPreparedMeta is the same stamp with the meta prepared once,
// as a legacy session stamps it.
func BenchmarkStampPreparedMeta(b *testing.B) {
	p := PrepareRequestMeta(NewRequestMeta(TasksCapabilities(), bridgeInfo))
	params := []byte(`{"name":"echo","arguments":{"text":"bridgeload-echo","n":[1,2,3]},"_meta":{"progressToken":7,"com.example/x":"y"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := StampPreparedMeta(params, p); err != nil {
			b.Fatal(err)
		}
	}
}
