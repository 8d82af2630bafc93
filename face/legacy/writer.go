package legacyface

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// streamWriter wraps the response of one HTTP request that go-sdk answers.
// It serialises go-sdk's writes with the bridge's own: SSE comment
// keep-alives on long POST streams and injected notifications on the
// standalone GET stream. go-sdk writes each SSE event with a single Write,
// so whole events never interleave.
type streamWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController

	mu     sync.Mutex
	wrote  bool // the response is committed (headers sent)
	sse    bool // committed as text/event-stream
	ready  bool // go-sdk has set its headers (signalled by the handler)
	closed bool // the request is over: nothing may be written

	res    *resumable               // the standalone GET stream's stored events (resume.go); nil: none
	replay []sessionmap.StreamEvent // events to replay once committed (a resumed GET stream)
}

func newStreamWriter(w http.ResponseWriter) *streamWriter {
	return &streamWriter{w: w, rc: http.NewResponseController(w)}
}

func (s *streamWriter) Header() http.Header { return s.w.Header() }

func (s *streamWriter) commitLocked() {
	if !s.wrote {
		s.wrote = true
		s.sse = strings.HasPrefix(s.w.Header().Get("Content-Type"), "text/event-stream")
	}
}

func (s *streamWriter) WriteHeader(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commitLocked()
	s.w.WriteHeader(code)
	if code == http.StatusOK {
		s.primeLocked()
	}
}

func (s *streamWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commitLocked()
	s.primeLocked()
	return s.w.Write(p)
}

// primeLocked starts a resumable event stream: the priming event (an id,
// no data) of a new stream, or the missed events of a resumed one.
func (s *streamWriter) primeLocked() {
	if s.res == nil || !s.sse {
		return
	}
	if !s.res.open {
		s.res.prime(s.w, s.rc)
		return
	}
	for _, ev := range s.replay {
		if writeEventID(s.w, s.rc, ev.ID, ev.Data) != nil {
			break
		}
	}
	s.replay = nil
}

// FlushError is what http.ResponseController (used by go-sdk) calls, so
// flushes are serialised too.
func (s *streamWriter) FlushError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rc.Flush()
}

func (s *streamWriter) Flush() { _ = s.FlushError() }

// Unwrap lets http.ResponseController reach deadlines of the real writer.
func (s *streamWriter) Unwrap() http.ResponseWriter { return s.w }

// markReady is called by the handler of the request once it runs: go-sdk
// set the response headers before it handed the request over, so from now on
// a keep-alive may commit the response as an event stream.
func (s *streamWriter) markReady() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.ready = true
	s.mu.Unlock()
}

// keepAlive writes an SSE comment (ignored by every SSE parser) so idle
// proxies keep the stream open. Before go-sdk wrote anything it commits the
// response as an event stream, which go-sdk's own headers already announce.
func (s *streamWriter) keepAlive() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if !s.wrote {
		if !s.ready || !strings.HasPrefix(s.w.Header().Get("Content-Type"), "text/event-stream") {
			return
		}
		s.w.WriteHeader(http.StatusOK)
		s.wrote, s.sse = true, true
		s.primeLocked()
	}
	if !s.sse {
		return
	}
	if _, err := s.w.Write([]byte(": keep-alive\n\n")); err == nil {
		_ = s.rc.Flush()
	}
}

// inject writes one JSON-RPC message as an SSE event on a committed event
// stream (the standalone GET stream).
func (s *streamWriter) inject(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || !s.wrote || !s.sse {
		return errors.New("stream not open")
	}
	return writeEventID(s.w, s.rc, s.res.store(msg), msg)
}

// close marks the request as over.
func (s *streamWriter) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// discardWriter receives go-sdk's answers to the bridge's own replayed
// requests (session rehydration); only the status matters.
type discardWriter struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func newDiscardWriter() *discardWriter { return &discardWriter{header: http.Header{}} }

func (d *discardWriter) Header() http.Header { return d.header }
func (d *discardWriter) WriteHeader(code int) {
	if d.code == 0 {
		d.code = code
	}
}
func (d *discardWriter) Write(p []byte) (int, error) {
	if d.code == 0 {
		d.code = http.StatusOK
	}
	if d.body.Len() < 64<<10 {
		d.body.Write(p)
	}
	return len(p), nil
}
func (d *discardWriter) FlushError() error { return nil }
func (d *discardWriter) Flush()            {}

func (d *discardWriter) status() int {
	if d.code == 0 {
		return http.StatusOK
	}
	return d.code
}
