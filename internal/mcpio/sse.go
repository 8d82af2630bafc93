package mcpio

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// EventReader reads a text/event-stream answer one message event at a time
// (the two upstream clients, upstream/legacy and upstream/modern, read their
// upstreams' SSE answers with it). Comments (keep-alives), events of other
// types and events without data are skipped; an event the stream ends in the
// middle of is dropped, as the SSE format says.
type EventReader struct {
	br  *bufio.Reader
	max int
	buf bytes.Buffer
}

// NewEventReader reads r; max bounds one event's data (and one line).
func NewEventReader(r io.Reader, max int) *EventReader {
	// A small buffer: one is allocated per answer, and longer lines are
	// read in pieces (readLine).
	return &EventReader{br: bufio.NewReaderSize(r, 4<<10), max: max}
}

// Next returns the data of the next message event (data lines joined by
// "\n", a fresh slice), io.EOF at the end of the stream, or the read error.
func (e *EventReader) Next() ([]byte, error) {
	e.buf.Reset()
	event := ""
	hasData := false
	for {
		line, err := e.readLine()
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			if hasData && (event == "" || event == "message") && e.buf.Len() > 0 {
				return bytes.Clone(e.buf.Bytes()), nil
			}
			e.buf.Reset()
			event, hasData = "", false
			continue
		}
		if line[0] == ':' {
			continue // comment (keep-alive)
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if hasData {
				e.buf.WriteByte('\n')
			}
			if e.buf.Len()+len(value) > e.max {
				return nil, rpc.Errorf(rpc.CodeInternalError, "SSE event exceeds %d bytes", e.max)
			}
			e.buf.Write(value)
			hasData = true
		case "event":
			event = string(value)
		}
	}
}

// readLine reads one line without its terminator (\n, \r\n or \r-less).
func (e *EventReader) readLine() ([]byte, error) {
	var out []byte
	for {
		chunk, err := e.br.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > e.max+1024 {
			return nil, rpc.Errorf(rpc.CodeInternalError, "SSE line exceeds %d bytes", e.max)
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(out) > 0 && errors.Is(err, io.EOF) {
			break
		}
		return nil, err
	}
	out = bytes.TrimSuffix(out, []byte("\n"))
	out = bytes.TrimSuffix(out, []byte("\r"))
	return out, nil
}
