package router

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/tasksbridge/tasksbridge/era"
	modernface "github.com/tasksbridge/tasksbridge/face/modern"
	"github.com/tasksbridge/tasksbridge/ops/metrics"
)

// ServeStdio serves one client on a byte stream (stdin/stdout for `bridge
// serve --stdio`). The client's era is decided by its first message
// (initialize ⇒ legacy; server/discover or per-request _meta ⇒ modern): a
// legacy client of a modern upstream is served by the legacy face, a modern
// client of a legacy upstream by the modern face. A same-era client needs no
// bridge on stdio; it gets an error. It returns when the client closes its
// input or ctx ends.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	br := bufio.NewReader(r)
	type line struct {
		b   []byte
		err error
	}
	// The first message decides the era; wait for it, or for ctx (a
	// signal before the client said anything).
	got := make(chan line, 1)
	go func() {
		b, err := br.ReadBytes('\n')
		got <- line{b, err}
	}()
	var (
		first []byte
		err   error
	)
	select {
	case l := <-got:
		first, err = l.b, l.err
	case <-ctx.Done():
		return ctx.Err()
	case <-s.streams.Done():
		return nil // shutting down
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("server: stdio: %w", err)
	}
	if len(bytes.TrimSpace(first)) == 0 && err != nil {
		return nil // closed before saying anything
	}
	clientEra := modernface.DetectClientEra(nil, first)
	upEra, err := s.upstreamEra(ctx, "")
	if err != nil {
		return fmt.Errorf("server: stdio: upstream %s: %w", s.target, err)
	}
	sm := &stdioMeter{mt: s.meter, clientEra: eraLabel(clientEra), upEra: eraLabel(upEra), pending: map[string]*exchange{}}
	in := &stdioReader{r: io.MultiReader(bytes.NewReader(first), br), lines: lineSplitter{onLine: sm.fromClient}}
	out := &stdioWriter{w: w, lines: lineSplitter{onLine: sm.fromServer}}
	defer sm.close()
	switch {
	case clientEra == era.Legacy && upEra == era.Modern:
		return s.legacy.ServeStdio(ctx, in, out)
	case clientEra == era.Modern && upEra == era.Legacy:
		err := s.modernF.ServeIO(ctx, io.NopCloser(in), nopWriteCloser{out})
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			return fmt.Errorf("server: stdio: %w", err)
		}
		return nil
	}
	return fmt.Errorf("server: stdio: a %s client of a %s upstream needs no bridge: run the upstream directly (same-era stdio passthrough is not supported)",
		eraLabel(clientEra), eraLabel(upEra))
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// stdioMeter correlates a stdio client's requests with the bridge's answers
// by JSON-RPC id.
type stdioMeter struct {
	mt               *wireMeter
	clientEra, upEra string

	mu      sync.Mutex
	client  implView // the legacy session's clientInfo (from initialize)
	pending map[string]*exchange
}

const stdioSession = "stdio"

func (sm *stdioMeter) fromClient(line []byte) {
	// The view keeps slices of the message, and line is the splitter's
	// buffer, reused for the next line.
	ex := sm.mt.request(sm.clientEra, sm.upEra, stdioSession, readClientMsg(bytes.Clone(line)), func() implView {
		sm.mu.Lock()
		defer sm.mu.Unlock()
		return sm.client
	})
	if ex == nil || ex.method == "" {
		return
	}
	sm.mu.Lock()
	if ex.method == "initialize" {
		sm.client = ex.client
	}
	sm.pending[ex.id] = ex
	sm.mu.Unlock()
}

func (sm *stdioMeter) fromServer(line []byte) {
	msg := new(wireMsg)
	if !decodeWire(line, msg) {
		return
	}
	if msg.Method != "" {
		sm.mt.serverRequest(sm.clientEra, stdioSession, msg)
		return
	}
	sm.mu.Lock()
	ex := sm.pending[idKey(msg.ID)]
	delete(sm.pending, idKey(msg.ID))
	sm.mu.Unlock()
	if ex != nil {
		ex.observe(msg)
		ex.finish(0, false, false)
	}
}

// close settles requests left unanswered when the stream ended.
func (sm *stdioMeter) close() {
	sm.mu.Lock()
	left := sm.pending
	sm.pending = map[string]*exchange{}
	sm.mu.Unlock()
	for _, ex := range left {
		ex.force(metrics.OutcomeCancelled)
		ex.finish(0, false, true)
	}
}

// lineSplitter hands complete newline-delimited messages to onLine.
type lineSplitter struct {
	onLine   func([]byte)
	buf      []byte
	overflow bool
}

func (l *lineSplitter) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.add(b)
			return
		}
		l.add(b[:i])
		if !l.overflow && len(bytes.TrimSpace(l.buf)) > 0 {
			l.onLine(l.buf)
		}
		l.buf, l.overflow = l.buf[:0], false
		b = b[i+1:]
	}
}

func (l *lineSplitter) add(b []byte) {
	if l.overflow {
		return
	}
	if len(l.buf)+len(b) > maxSniff {
		l.overflow, l.buf = true, l.buf[:0]
		return
	}
	l.buf = append(l.buf, b...)
}

type stdioReader struct {
	r     io.Reader
	mu    sync.Mutex
	lines lineSplitter
}

func (s *stdioReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.mu.Lock()
	s.lines.feed(p[:n])
	s.mu.Unlock()
	return n, err
}

type stdioWriter struct {
	w     io.Writer
	mu    sync.Mutex
	lines lineSplitter
}

func (s *stdioWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Observed first: an answer is recorded before the client reads it.
	s.lines.feed(p)
	return s.w.Write(p)
}
