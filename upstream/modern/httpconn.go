package modernup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/modern"
)

// httpConn is one Streamable HTTP request/response exchange as an
// mcp.Connection: Write POSTs the already-encoded request, Read yields the
// messages of its answer (one application/json body, or the events of a
// text/event-stream). A 2026-07-28 upstream is stateless (no session id, no
// GET stream, M-40), so a call is exactly one POST and this is all the
// transport the Client needs; go-sdk's streamable client connection costs a
// goroutine per answer and decodes every message twice through a fresh
// 32 KiB buffer, which made it the largest part of the bridge's CPU per call.
// Headers follow the transport: Content-Type, Accept, Mcp-Protocol-Version
// from _meta, and the standard Mcp-Method / Mcp-Name (M-10, M-32); the
// per-call and error-classifying parts stay in headerRoundTripper.
type httpConn struct {
	endpoint string
	hc       *http.Client

	once  sync.Once
	ready chan struct{} // closed once Write has a response (or failed)
	resp  *http.Response
	forID jsonrpc.ID // the call whose answer ends the exchange

	mu     sync.Mutex
	cancel context.CancelFunc // ends the POST
	detach func() bool        // stops the call's ctx from ending it
	closed bool
	body   io.Reader          // JSON answer
	events *mcpio.EventReader // SSE answer
	sse    bool
	served bool // the JSON body was read, or the stream's answer seen
}

func newHTTPConn(endpoint string, hc *http.Client) *httpConn {
	return &httpConn{endpoint: endpoint, hc: hc, ready: make(chan struct{})}
}

// errStreamEnded is the answer synthesised when a response stream ends
// without the call's response: the request is lost and may be re-issued with
// a new id (M-13). It is not a *jsonrpc.Error, so Client.call can tell.
var errStreamEnded = errors.New("the upstream's response stream ended without an answer")

func (c *httpConn) SessionID() string { return "" }

func (c *httpConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		// The Client never answers or notifies over HTTP (M-09); a
		// cancelled call's stream is simply closed (M-12).
		return nil
	}
	body, err := encodeRequest(req)
	if err != nil {
		return err
	}
	// The POST lives until the call is abandoned (ctx ends before the
	// answer: the stream is closed, M-12) or, once answered, until the rest
	// of the stream is read (Close): a request context cancelled while the
	// body is still open would discard the keep-alive connection.
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	detach := context.AfterFunc(ctx, cancel)
	c.mu.Lock()
	c.cancel, c.detach = cancel, detach
	c.mu.Unlock()
	hr, err := http.NewRequestWithContext(hctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	h := hr.Header
	h["Content-Type"] = []string{"application/json"}
	h["Accept"] = []string{"application/json, text/event-stream"}
	setStandardHeaders(h, req)
	resp, err := c.hc.Do(hr)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		resp.Body.Close()
		return &statusError{code: resp.StatusCode, status: resp.Status}
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "application/json" && mt != "text/event-stream" {
		resp.Body.Close()
		return fmt.Errorf("%s: unsupported content type %q", req.Method, mt)
	}
	c.mu.Lock()
	c.resp, c.forID, c.sse = resp, req.ID, mt == "text/event-stream"
	if c.sse {
		c.events = mcpio.NewEventReader(resp.Body, maxAnswer)
	} else {
		c.body = io.LimitReader(resp.Body, maxAnswer)
	}
	closed := c.closed
	c.mu.Unlock()
	if closed {
		resp.Body.Close()
	}
	c.once.Do(func() { close(c.ready) })
	return nil
}

// Read returns the next message of the answer; io.EOF after the last one.
func (c *httpConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-c.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c.mu.Lock()
	body, events, served, closed := c.body, c.events, c.served, c.closed
	c.mu.Unlock()
	if closed || (body == nil && events == nil) || served {
		return nil, io.EOF
	}
	if events == nil {
		b, err := io.ReadAll(body)
		c.setServed()
		if err != nil {
			return nil, err
		}
		return decodeMessage(b)
	}
	for {
		data, err := events.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				// M-13: the stream ended without the answer.
				c.setServed()
				return &jsonrpc.Response{ID: c.forID, Error: errStreamEnded}, nil
			}
			return nil, err
		}
		msg, err := decodeMessage(data)
		if err != nil {
			return nil, err
		}
		if r, ok := msg.(*jsonrpc.Response); ok && r.ID == c.forID {
			c.setServed()
		}
		return msg, nil
	}
}

func (c *httpConn) setServed() {
	c.mu.Lock()
	c.served = true
	c.mu.Unlock()
}

func (c *httpConn) Close() error {
	c.mu.Lock()
	c.closed = true
	resp, served, sse := c.resp, c.served, c.sse
	cancel, detach := c.cancel, c.detach
	c.resp, c.cancel = nil, nil
	c.mu.Unlock()
	c.once.Do(func() { close(c.ready) })
	if cancel == nil {
		return nil // never written, or closed before
	}
	if resp == nil || !served {
		// Abandoned (M-12) or broken: ending the POST's context before
		// closing the stream tells every RoundTripper on the way (the
		// bridge's upstream meter) that the caller gave up, not the
		// upstream.
		cancel()
		if resp != nil {
			resp.Body.Close()
		}
		return nil
	}
	if !sse {
		resp.Body.Close() // read to its end: the connection is reused
		cancel()
		return nil
	}
	// Answered: the upstream ends the stream right after the answer, so
	// reading to its end lets the keep-alive connection be reused instead of
	// dialling the next call afresh; a stream held open longer is cut off.
	if !detach() {
		// The call's ctx ended meanwhile: the POST is cancelled already.
		cancel()
		resp.Body.Close()
		return nil
	}
	go func() {
		t := time.AfterFunc(drainWait, cancel)
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
		t.Stop()
		resp.Body.Close()
		cancel()
	}()
	return nil
}

// drainWait and maxDrain bound reading the rest of an answered stream;
// maxAnswer bounds one JSON answer or SSE event.
const (
	drainWait = time.Second
	maxDrain  = 256 << 10
	maxAnswer = 16 << 20
)

// encodeRequest writes {"jsonrpc":"2.0","id":…,"method":…,"params":…}.
func encodeRequest(req *jsonrpc.Request) ([]byte, error) {
	id, err := json.Marshal(req.ID.Raw())
	if err != nil {
		return nil, err
	}
	method, err := json.Marshal(req.Method)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 48+len(id)+len(method)+len(req.Params))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"method":`...)
	b = append(b, method...)
	if len(req.Params) > 0 {
		b = append(b, `,"params":`...)
		b = append(b, req.Params...)
	}
	return append(b, '}'), nil
}

// wireMessage is any JSON-RPC message as it arrives.
type wireMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
}

// decodeMessage decodes one JSON-RPC message with encoding/json (one pass,
// no per-message decoder buffer).
func decodeMessage(b []byte) (jsonrpc.Message, error) {
	var w wireMessage
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("decode response: %w", err)
	}
	var id jsonrpc.ID
	if len(w.ID) > 0 && string(w.ID) != "null" {
		var err error
		if id, err = parseWireID(w.ID); err != nil {
			return nil, err
		}
	}
	if w.Method != "" {
		return &jsonrpc.Request{ID: id, Method: w.Method, Params: w.Params}, nil
	}
	if !id.IsValid() && w.Error == nil {
		return nil, errors.New("decode response: neither a request nor a response")
	}
	r := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		r.Error = w.Error
	}
	return r, nil
}

func parseWireID(raw json.RawMessage) (jsonrpc.ID, error) {
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return jsonrpc.ID{}, fmt.Errorf("decode response id: %w", err)
		}
		return jsonrpc.MakeID(s)
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return jsonrpc.ID{}, fmt.Errorf("decode response id: %w", err)
	}
	return jsonrpc.MakeID(f)
}

// setStandardHeaders sets Mcp-Protocol-Version from _meta and, for
// 2026-07-28, Mcp-Method and Mcp-Name (tools/call and prompts/get: name;
// resources/read: uri; tasks/get|update|cancel: taskId; M-10, M-32). The
// value is base64-wrapped by headerRoundTripper when needed.
func setStandardHeaders(h http.Header, req *jsonrpc.Request) {
	p := headerParams(req.Params)
	pv := p.protocolVersion
	if pv == "" {
		return
	}
	h[modern.HeaderProtocolVersion] = []string{pv}
	if pv < modern.ProtocolVersion {
		return
	}
	h[headerMethod] = []string{req.Method}
	name := ""
	switch {
	case req.Method == "tools/call" || req.Method == "prompts/get":
		name = p.name
	case req.Method == "resources/read":
		name = p.uri
	case isTaskMethod(req.Method):
		name = p.taskID
	}
	if name != "" {
		h[headerName] = []string{name}
	}
}

// headerFields are the params members the standard headers carry.
type headerFields struct{ name, uri, taskID, protocolVersion string }

// headerParams reads headerFields from params member by member (the bridge
// built params; a tool's arguments, which can be most of a 1 MB call, are
// skipped over, not decoded). Like encoding/json into a struct, names match
// case-insensitively, the last duplicate wins and a member that is not a
// string is left empty.
func headerParams(params []byte) headerFields {
	var f headerFields
	str := func(v []byte, dst *string) {
		var s string
		if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
			*dst = s
		}
	}
	for k, v := range rawjson.All(params) {
		switch key := string(rawjson.KeyBytes(k)); {
		case strings.EqualFold(key, "name"):
			str(v, &f.name)
		case strings.EqualFold(key, "uri"):
			str(v, &f.uri)
		case strings.EqualFold(key, "taskId"):
			str(v, &f.taskID)
		case strings.EqualFold(key, "_meta"):
			for mk, mv := range rawjson.All(v) {
				if strings.EqualFold(string(rawjson.KeyBytes(mk)), modern.MetaKeyProtocolVersion) {
					str(mv, &f.protocolVersion)
				}
			}
		}
	}
	return f
}
