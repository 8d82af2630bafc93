package mcpio

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// The event reader follows the SSE framing upstreams use: multi-line data
// joined by "\n", CRLF line ends, comments, priming events without data and
// events of other types skipped, lines longer than the buffer read whole, an
// event cut off by the end of the stream dropped, an oversized event refused.
func TestEventReader(t *testing.T) {
	long := strings.Repeat("x", 10<<10)
	stream := ": keep-alive\n\n" +
		"id: 1\nretry: 100\n\n" +
		"event: message\ndata: {\"a\":\ndata: 1}\n\n" +
		"event: other\ndata: skipped\n\n" +
		"data:{\"b\":2}\r\n\r\n" +
		"data: " + long + "\n\n" +
		"data: {\"cut\":1}"
	er := NewEventReader(strings.NewReader(stream), 1<<20)
	var got []string
	for {
		data, err := er.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(data))
	}
	want := []string{"{\"a\":\n1}", `{"b":2}`, long}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("events %.80q, want %.80q", got, want)
	}

	_, err := NewEventReader(strings.NewReader("data: "+long+"\n\n"), 1<<10).Next()
	if err == nil || !strings.Contains(err.Error(), "exceeds 1024 bytes") {
		t.Fatalf("oversized event: %v", err)
	}
}
