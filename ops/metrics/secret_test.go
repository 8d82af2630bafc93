package metrics

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// TestLooksSecretDetectionRates measures the heuristic on the id shapes the
// bridge and its peers mint, from a seeded generator (deterministic): hex,
// UUID and rand.Text (base32) ids are always caught; random base64url ids
// (sessionmap.NewTaskID) at least 99.8% of the time (docs/ARCHITECTURE.md,
// No secret or id in logs and labels).
func TestLooksSecretDetectionRates(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 42))
	bytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	b32 := base32.StdEncoding.WithPadding(base32.NoPadding)
	for _, c := range []struct {
		name    string
		gen     func() string
		minRate float64
	}{
		{"hex128", func() string { return hex.EncodeToString(bytes(16)) }, 1},
		{"uuid", func() string {
			h := hex.EncodeToString(bytes(16))
			return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
		}, 1},
		{"rand.Text", func() string { return b32.EncodeToString(bytes(16))[:26] }, 1},
		{"base64url144", func() string { return base64.RawURLEncoding.EncodeToString(bytes(18)) }, 0.998},
		{"base64std256", func() string { return base64.StdEncoding.EncodeToString(bytes(32)) }, 0.998},
	} {
		const n = 20000
		caught := 0
		for range n {
			if looksSecret(c.gen()) {
				caught++
			}
		}
		if rate := float64(caught) / n; rate < c.minRate {
			t.Errorf("%s: caught %.4f, want >= %.4f", c.name, rate, c.minRate)
		} else {
			t.Logf("%s: caught %.4f", c.name, rate)
		}
	}
}
