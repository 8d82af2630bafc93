package cluster

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"sync"
)

// Recorder watches the upstream's traffic for task creations: each
// tools/call whose arguments carry a "marker" string (the demo tools ignore
// unknown arguments) and whose answer is a CreateTaskResult is recorded as
// marker → upstream task id. A client that gives every call its own marker
// can then tell a lost task (no upstream task) from a duplicated one (two
// upstream tasks for one call, e.g. a create sent again after a crash).
type Recorder struct {
	mu       sync.Mutex
	byMarker map[string][]string
	unmarked int
}

func newRecorder() *Recorder { return &Recorder{byMarker: map[string][]string{}} }

// Tasks returns the upstream task ids created for marker, in order.
func (r *Recorder) Tasks(marker string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.byMarker[marker]...)
}

// Markers returns every marker with its upstream task ids.
func (r *Recorder) Markers() map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]string, len(r.byMarker))
	for k, v := range r.byMarker {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// Unmarked counts task creations without a marker.
func (r *Recorder) Unmarked() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.unmarked
}

// createdTaskID finds the task id of a CreateTaskResult in a JSON or SSE
// answer (the flat result has "task":{"taskId":...} or a top-level taskId).
var createdTaskID = regexp.MustCompile(`"taskId"\s*:\s*"([^"]+)"`)

func (r *Recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost {
			next.ServeHTTP(w, req)
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Arguments struct {
					Marker string `json:"marker"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
			next.ServeHTTP(w, req)
			return
		}
		cw := &captureWriter{ResponseWriter: w}
		next.ServeHTTP(cw, req)
		m := createdTaskID.FindSubmatch(cw.buf.Bytes())
		if m == nil {
			return // not a task (an error, or echo)
		}
		r.mu.Lock()
		if msg.Params.Arguments.Marker == "" {
			r.unmarked++
		} else {
			r.byMarker[msg.Params.Arguments.Marker] = append(r.byMarker[msg.Params.Arguments.Marker], string(m[1]))
		}
		r.mu.Unlock()
	})
}

// captureWriter keeps a copy of what a tools/call answer wrote (a few
// hundred bytes) and passes everything through.
type captureWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (c *captureWriter) Write(b []byte) (int, error) {
	if c.buf.Len() < 64<<10 {
		c.buf.Write(b)
	}
	return c.ResponseWriter.Write(b)
}

func (c *captureWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
