package sessionmap

import (
	"testing"
	"time"
)

// Stored bytes and client cursors are untrusted input: decoding them must
// return an error, never panic (L-51 for cursors).
func FuzzDecode(f *testing.F) {
	secret := make([]byte, secretLen)
	sc := Scope{Session: "s"}
	created := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	task := Task{ID: "t", Scope: sc, Direction: LegacyToModern, Origin: OriginUpstreamTask, Status: StatusWorking,
		StatusMessage: "m", CreatedAt: created, LastUpdatedAt: created, TTLMs: i64p(1000), PollIntervalMs: i64p(5)}
	enc, _ := encodeTask(task)
	f.Add(enc)
	f.Add(append([]byte{1}, taskRecordV1...))
	f.Add(append([]byte{1}, sessionRecordV1...))
	f.Add(encodeSummary(task))
	f.Add([]byte(encodeCursor(secret, sc, posOf(task))))
	f.Add([]byte{})
	f.Add([]byte{1, '{', '}'})
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, err := decodeTask("fuzz", b); err == nil && !got.Scope.Valid() {
			t.Fatalf("decoded a task without a scope: %+v", got)
		}
		_, _ = decodeSession("fuzz", b)
		if got, err := decodeSummary("t", sc, b); err == nil && !got.Status.Valid() {
			t.Fatalf("decoded a summary with status %q", got.Status)
		}
		if p, err := decodeCursor(secret, sc, string(b)); err == nil && p.id == "" {
			t.Fatal("accepted a cursor without a position")
		}
	})
}
