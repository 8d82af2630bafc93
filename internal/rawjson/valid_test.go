package rawjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// validSeeds are edge cases of the JSON grammar, both ways.
var validSeeds = []string{
	``, ` `, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `1e`, `1e+`, `1E-7`, `-1.5e10`, `1x`, `1 `, ` 1 2`,
	`true`, `tru`, `truex`, `false`, `null`, `nul`, `""`, `"`, `"\"`, `"\u00e9"`, `"\u00g9"`, `"\u00e"`,
	`"\x"`, `"\/\b\f\n\r\t\\"`, "\"a\x00b\"", "\"a\x1fb\"", "\"\xff\xfe\"", "\"\t\"",
	`{}`, `{ }`, `[]`, `[ ]`, `{"a":1}`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{1:2}`, `{"a":1 "b":2}`,
	`[1,]`, `[,1]`, `[1 2]`, `[1,[2,{"x":[]}]]`, `{"a":[}`, `[}`, `{]`, `]`, `}`, `[[[`, `{"a":{"b":{}}}`,
	" \t\r\n[1]\n", "\v1", `[1]]`, `{"a":1}}`, "[\"\u2028\"]",
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	seeds := append([]string{
		strings.Repeat("[", 1500) + strings.Repeat("]", 1500), // past the own stack
		strings.Repeat("[", 1500) + strings.Repeat("]", 1499),
		strings.Repeat(`{"a":`, 70) + "0" + strings.Repeat("}", 70),
	}, validSeeds...)
	for _, s := range seeds {
		if got, want := Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("Valid(%.60q) = %v, json.Valid says %v", s, got, want)
		}
	}
}

func TestScanSpaced(t *testing.T) {
	for s, want := range map[string]bool{`{"a":[1,"b c"]}`: false, `{"a": 1}`: true, ` 1`: true, `[1,2]` + "\n": true, `"  "`: false} {
		if ok, spaced := scan([]byte(s)); !ok || spaced != want {
			t.Errorf("scan(%q) = %v, %v; want true, %v", s, ok, spaced, want)
		}
		if IsCompact([]byte(s)) == want {
			t.Errorf("IsCompact(%q) = %v", s, !want)
		}
	}
}

// FuzzValid: Valid accepts exactly what json.Valid accepts, and scan's
// spaced answer is whether json.Compact changes the value.
func FuzzValid(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ok, spaced := scan(b)
		if want := json.Valid(b); ok != want {
			t.Fatalf("Valid(%q) = %v, json.Valid says %v", b, ok, want)
		}
		if !ok {
			return
		}
		var c bytes.Buffer
		if err := json.Compact(&c, b); err != nil {
			t.Fatal(err)
		}
		if changed := !bytes.Equal(c.Bytes(), b); changed != spaced {
			t.Fatalf("scan(%q) spaced = %v, but Compact changes it: %v", b, spaced, changed)
		}
	})
}

// BenchmarkValid compares Valid with json.Valid on 1 MB bodies.
//
//	go test -run '^$' -bench Valid ./internal/rawjson/
func BenchmarkValid(b *testing.B) {
	unit := strings.Repeat("[", 120) + "0" + strings.Repeat("]", 120)
	bodies := map[string][]byte{
		"nested":  []byte("[" + strings.Repeat(unit+",", (1<<20)/len(unit)) + "0]"),
		"string":  []byte(`"` + strings.Repeat("x", 1<<20) + `"`),
		"escapes": []byte(`"` + strings.Repeat(`\u00e9\n\"`, (1<<20)/10) + `"`),
		"members": func() []byte {
			var s strings.Builder
			s.WriteString(`{"k":0`)
			for s.Len() < 1<<20 {
				s.WriteString(`,"key":12345`)
			}
			return []byte(s.String() + "}")
		}(),
	}
	for name, body := range bodies {
		b.Run(name+"/rawjson", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for range b.N {
				if !Valid(body) {
					b.Fatal("invalid")
				}
			}
		})
		b.Run(name+"/encoding-json", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for range b.N {
				if !json.Valid(body) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// All over any prefix of a message (a head read off a longer body, as the
// upstream meter reads one) stays inside it and never panics.
func TestAllOnPrefixes(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","id":"a\"b","params":{"s":"x\\\"\u00e9","n":[1,{"k":"v\\"}]},"method":"m"}`)
	for n := range len(msg) + 1 {
		p := msg[:n:n] // no capacity past the prefix
		for k, v := range All(p) {
			if len(k) > n || len(v) > n {
				t.Fatalf("prefix %d: member past the end", n)
			}
		}
		_ = DepthExceeds(p, 3)
	}
}
