package legacyup

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadSSE(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"plain", "data: {\"a\":1}\n\n", []string{`{"a":1}`}},
		{"crlf and no space", "data:{\"a\":1}\r\n\r\n", []string{`{"a":1}`}},
		{"multi-line data joined by newline", "data: {\"a\":\ndata: 1}\n\n", []string{"{\"a\":\n1}"}},
		{"comments, ids and priming events skipped", ": keep-alive\n\nid: 7\ndata:\n\nid: 8\ndata: x\n\n", []string{"x"}},
		{"other event names ignored", "event: ping\ndata: y\n\nevent: message\ndata: z\n\n", []string{"z"}},
		{"last event without blank line is dropped", "data: a\n\ndata: b", []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := readSSE(iotest.OneByteReader(strings.NewReader(tc.in)), func(d []byte) bool {
				got = append(got, string(d))
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("events %q, want %q", got, tc.want)
			}
		})
	}
}

func TestReadSSEStopsWhenAsked(t *testing.T) {
	n := 0
	err := readSSE(strings.NewReader("data: 1\n\ndata: 2\n\n"), func([]byte) bool { n++; return false })
	if err != nil || n != 1 {
		t.Fatalf("n=%d err=%v; want one event then stop", n, err)
	}
}

func TestReadSSEReportsBrokenStreams(t *testing.T) {
	boom := errors.New("boom")
	err := readSSE(io.MultiReader(strings.NewReader("data: 1\n\n"), iotest.ErrReader(boom)), func([]byte) bool { return true })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the read error", err)
	}
}

// FuzzReadSSE: any stream is read without a panic, and every event handed
// out is one whose data lines were all seen.
func FuzzReadSSE(f *testing.F) {
	f.Add("data: {}\n\n")
	f.Add("event: x\ndata: a\ndata: b\r\n\r\n: c\n")
	f.Add("data")
	f.Fuzz(func(t *testing.T, in string) {
		_ = readSSE(strings.NewReader(in), func(d []byte) bool {
			if !strings.Contains(in, string(d[:min(len(d), 1)])) {
				t.Fatalf("event data %q not from the input", d)
			}
			return true
		})
	})
}
