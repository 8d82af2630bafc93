package router

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
)

// The legacy face parks waits only behind wrappers that can follow it.
var _ legacyface.ResponseDetacher = (*sniffWriter)(nil)

// maxSniff bounds what the wire observer buffers of one message: a larger
// message is passed on untouched but not inspected (its request then counts
// by HTTP status).
const maxSniff = 4 << 20

// idKey is a message id as a map key (never a label).
func idKey(raw json.RawMessage) string { return string(bytes.TrimSpace(raw)) }

// hasTask reports whether a tools/call asked for a legacy task.
func (p *paramsView) hasTask() bool {
	return p != nil && !isNull(p.raw.task)
}

// msgParser splits a response body into JSON-RPC messages as it is written:
// one JSON body (or a batch), or the data of each SSE event.
type msgParser struct {
	sse      bool
	onMsg    func([]byte)
	buf      []byte // JSON body, or the current SSE line
	data     []byte // SSE: the current event's data
	overflow bool   // a message was too large to inspect
	closed   bool
}

// parserPool recycles parsers and their buffers: every metered answer
// needs one, and most answers are small.
var parserPool = sync.Pool{New: func() any { return new(msgParser) }}

// maxPooledBuf: a parser whose buffers grew past this (a large answer) is
// left to the collector rather than kept.
const maxPooledBuf = 64 << 10

// keepBuf is the most a parser keeps of a buffer between messages: a
// long-lived stream (an upstream subscriptions/listen, whose
// acknowledgement lists up to a thousand task ids) keeps no buffer sized
// for its largest message, only what its next one needs.
const keepBuf = 4 << 10

func newMsgParser(contentType string, onMsg func([]byte)) *msgParser {
	return newParser(isEventStream(contentType), onMsg)
}

func newParser(sse bool, onMsg func([]byte)) *msgParser {
	p := parserPool.Get().(*msgParser)
	p.sse, p.onMsg = sse, onMsg
	return p
}

// idle reports whether p holds nothing between messages: an SSE parser
// that can be released and made again (newParser) without losing state.
func (p *msgParser) idle() bool {
	return p.sse && len(p.buf) == 0 && len(p.data) == 0 && !p.overflow && !p.closed
}

// release returns p to the pool; p must not be used afterwards.
func (p *msgParser) release() {
	if cap(p.buf) > maxPooledBuf || cap(p.data) > maxPooledBuf {
		return
	}
	*p = msgParser{buf: p.buf[:0], data: p.data[:0]}
	parserPool.Put(p)
}

// isEventStream reports whether a Content-Type is text/event-stream
// (parameters ignored, case-insensitive) without parsing its parameters.
func isEventStream(contentType string) bool {
	if i := strings.IndexByte(contentType, ';'); i >= 0 {
		contentType = contentType[:i]
	}
	return strings.EqualFold(strings.TrimSpace(contentType), "text/event-stream")
}

func (p *msgParser) feed(b []byte) {
	if p.closed || len(b) == 0 {
		return
	}
	if !p.sse {
		if len(p.buf)+len(b) > maxSniff {
			p.overflow = true
			p.buf = nil
			p.closed = true
			return
		}
		p.buf = append(p.buf, b...)
		// Dispatch as soon as the body is complete, so the answer is
		// recorded before the client can have read it. Only a chunk that
		// ends like a JSON value is worth the validity scan.
		if t := bytes.TrimRight(b, " \t\r\n"); len(t) > 0 && (t[len(t)-1] == '}' || t[len(t)-1] == ']') && json.Valid(p.buf) {
			p.close()
		}
		return
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.appendLine(b)
			return
		}
		if len(p.buf) == 0 && i <= maxSniff {
			// A whole line in this chunk: read in place.
			p.line(bytes.TrimSuffix(b[:i], []byte("\r")))
		} else {
			p.appendLine(b[:i])
			p.line(bytes.TrimSuffix(p.buf, []byte("\r")))
			p.buf = trimmed(p.buf)
		}
		b = b[i+1:]
	}
}

// trimmed is b emptied for the next message, let go of when it grew past
// keepBuf.
func trimmed(b []byte) []byte {
	if cap(b) > keepBuf {
		return nil
	}
	return b[:0]
}

func (p *msgParser) appendLine(b []byte) {
	if len(p.buf)+len(b) > maxSniff {
		p.overflow = true
		p.buf = p.buf[:0]
		return
	}
	p.buf = append(p.buf, b...)
}

// line handles one SSE line (text/event-stream framing: "data:" lines build
// the event, a blank line dispatches it, comments and other fields are
// skipped).
func (p *msgParser) line(l []byte) {
	switch {
	case len(l) == 0:
		if len(p.data) > 0 {
			p.onMsg(p.data)
		}
		p.data = trimmed(p.data)
	case bytes.HasPrefix(l, []byte("data:")):
		v := bytes.TrimPrefix(l[5:], []byte(" "))
		if len(p.data)+len(v) > maxSniff {
			p.overflow = true
			p.data = p.data[:0]
			return
		}
		if len(p.data) > 0 {
			p.data = append(p.data, '\n')
		}
		p.data = append(p.data, v...)
	}
}

// close dispatches a JSON body (each element of a batch).
func (p *msgParser) close() {
	if p.closed {
		return
	}
	p.closed = true
	if p.sse {
		if len(p.data) > 0 {
			p.onMsg(p.data)
		}
		return
	}
	b := bytes.TrimSpace(p.buf)
	switch {
	case len(b) == 0:
	case b[0] == '{':
		p.onMsg(b)
	case b[0] == '[':
		var batch []json.RawMessage
		if json.Unmarshal(b, &batch) == nil {
			for _, m := range batch {
				p.onMsg(m)
			}
		}
	}
}

// sniffWriter passes a response through unchanged (flushes included) while
// handing every JSON-RPC message in it to a parser.
type sniffWriter struct {
	w     http.ResponseWriter
	onMsg func([]byte)
	// ex, when set, is told after each chunk was parsed (a passthrough
	// exchange settles its upstream request there).
	ex *exchange

	mu sync.Mutex
	p  *msgParser
	// parked: the response was taken over and p, idle between messages,
	// was let go (a parked wait keeps no parser nor its buffers while it
	// waits); the next bytes make one again.
	parked bool
	status int
	// written mirrors status for Status, which the parser's callbacks call
	// while mu is held.
	written atomic.Int32
	// detached: the handler took the connection over (DetachResponse);
	// call then records the request when the response ends (httpCall.end),
	// after letting go of what its records keep that the answer does not
	// need.
	detached atomic.Bool
	call     *httpCall
}

func (s *sniffWriter) Header() http.Header { return s.w.Header() }

func (s *sniffWriter) WriteHeader(code int) {
	s.mu.Lock()
	if s.status == 0 && code >= 200 {
		s.status = code
		s.written.Store(int32(code))
		s.p = newMsgParser(s.w.Header().Get("Content-Type"), s.onMsg)
	}
	s.mu.Unlock()
	s.w.WriteHeader(code)
}

// Write observes b before passing it on: whatever the answer says is
// recorded before the client can have read it.
func (s *sniffWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	if s.status == 0 {
		s.mu.Unlock()
		s.WriteHeader(http.StatusOK)
		s.mu.Lock()
	}
	if s.onMsg != nil && s.p != nil {
		s.p.feed(b)
	}
	s.mu.Unlock()
	s.ex.settleUpstream(false)
	return s.w.Write(b)
}

// Status is the HTTP status written so far (0: none yet).
func (s *sniffWriter) Status() int { return int(s.written.Load()) }

// Flush lets handlers stream SSE through the wrapper.
func (s *sniffWriter) Flush() { _ = s.FlushError() }

// FlushError is what http.ResponseController calls.
func (s *sniffWriter) FlushError() error {
	switch f := s.w.(type) {
	case interface{ FlushError() error }:
		return f.FlushError() // net/http's own writer: no controller per flush
	case http.Flusher:
		f.Flush()
		return nil
	}
	return http.NewResponseController(s.w).Flush()
}

// Unwrap serves http.ResponseController.
func (s *sniffWriter) Unwrap() http.ResponseWriter { return s.w }

// DetachResponse serves the legacy face's parked waits (face.ResponseDetacher):
// the face took the connection over and writes the rest of the response
// after its handler returned. The bytes it writes are observed as Write
// observes them (before they reach the client), and the request is
// recorded when the face ends the response, not when the handler returns.
// The writer lets go of net/http's response (and through it the
// connection's buffers), which a parked wait must not keep.
func (s *sniffWriter) DetachResponse() (observe func([]byte), end func(gone bool)) {
	s.mu.Lock()
	s.detached.Store(true)
	s.w = nil
	s.parkParserLocked()
	s.mu.Unlock()
	if s.call != nil {
		s.call.exchange().detach()
	}
	observe = func(b []byte) {
		s.mu.Lock()
		if s.parked {
			s.p, s.parked = newParser(true, s.onMsg), false
		}
		if s.onMsg != nil && s.p != nil {
			s.p.feed(b)
		}
		s.parkParserLocked()
		s.mu.Unlock()
	}
	end = func(gone bool) {
		if s.call != nil {
			s.call.end(gone)
		}
	}
	return observe, end
}

// parkParserLocked lets go of a detached response's parser while it holds
// nothing (between two events: a parked wait's keep-alives are comments).
func (s *sniffWriter) parkParserLocked() {
	if s.p != nil && s.p.idle() {
		s.p.release()
		s.p, s.parked = nil, true
	}
}

// finish dispatches a buffered JSON body and returns the HTTP status (0 when
// nothing was written) and whether a message was too large to inspect.
func (s *sniffWriter) finish() (status int, overflow bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.parked = false
	if s.p == nil {
		return s.status, false // nothing written, or a parked parser: idle, nothing to dispatch
	}
	s.p.close()
	overflow = s.p.overflow
	s.p.release()
	s.p = nil
	return s.status, overflow
}
