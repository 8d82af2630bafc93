package legacyup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/internal/rawjson"
)

// Header names of the 2025-11-25 Streamable HTTP transport.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "MCP-Protocol-Version"
)

// maxMessage bounds one JSON-RPC message (an SSE event or a JSON body).
const maxMessage = 16 << 20

// httpWire sends every call as its own POST on the session (raw JSON-RPC
// over HTTP, with the session's Mcp-Session-Id): the call's response stream then
// carries exactly the messages that belong to it.
type httpWire struct {
	endpoint string
	hc       *http.Client
}

func (w *httpWire) post(ctx context.Context, s *Session, msg jsonrpc.Message) (*http.Response, error) {
	body, err := encodeMessage(msg)
	if err != nil {
		return nil, fmt.Errorf("legacy upstream: encode message: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("legacy upstream: build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(headerProtocolVersion, ProtocolVersion)
	if s.id != "" {
		req.Header.Set(headerSessionID, s.id)
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("legacy upstream %s: %w", s.pool.cfg.Target, ctx.Err())
		}
		if s.Err() != nil {
			return nil, s.Err()
		}
		return nil, newError(ErrUnavailable, err, "legacy upstream %s unreachable: %v", s.pool.cfg.Target, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if ae := oauthmeta.FromResponse(resp, methodOf(msg)); ae != nil {
		return nil, unauthorized(s.pool.cfg.Target, ae)
	}
	if resp.StatusCode == http.StatusNotFound && s.id != "" {
		// §2.5.3 of the 2025-11-25 transport: the server answers 404 for a
		// session it no longer has (expired, deleted, or the server restarted).
		g := s.gone(fmt.Sprintf("the upstream answered HTTP 404 for it (session not found%s)", bodyHint(data)))
		s.fail(g)
		return nil, unsent{g}
	}
	status := fmt.Sprintf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
		return nil, newError(ErrUnavailable, nil, "legacy upstream %s answered %s%s", s.pool.cfg.Target, status, bodyHint(data))
	}
	if m, err := jsonrpc.DecodeMessage(data); err == nil {
		if r, ok := m.(*jsonrpc.Response); ok && r.Error != nil {
			var we *jsonrpc.Error
			if errors.As(r.Error, &we) {
				return nil, we // the upstream's own answer to this request
			}
		}
	}
	return nil, newError(ErrBadResponse, nil, "legacy upstream %s answered %s without a JSON-RPC error%s", s.pool.cfg.Target, status, bodyHint(data))
}

// bodyHint renders the start of an error body for a message.
func bodyHint(data []byte) string {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return ""
	}
	if len(data) > 200 {
		data = append(data[:200:200], "…"...)
	}
	return ": " + string(data)
}

func (w *httpWire) roundTrip(ctx context.Context, s *Session, c *call, req *jsonrpc.Request) (json.RawMessage, error) {
	// The POST also ends when the session dies, so no call outlives it.
	callerCtx := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	// Under 2025-11-25 a dropped connection is not a cancellation: when the
	// caller gives up, say so (basic/utilities/cancellation; for a blocking
	// tasks/result it ends only that wait, L-86).
	answered := false
	defer func() {
		if !answered && callerCtx.Err() != nil && s.Alive() {
			params, _ := json.Marshal(map[string]any{"requestId": req.ID.Raw(), "reason": "the bridge's caller went away"})
			go func() {
				nctx, ncancel := context.WithTimeout(context.Background(), notifyTimeout)
				defer ncancel()
				_ = w.send(nctx, s, &jsonrpc.Request{Method: "notifications/cancelled", Params: params})
			}()
		}
	}()

	resp, err := w.post(ctx, s, req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		return nil, newError(ErrBadResponse, nil, "legacy upstream %s answered %s with HTTP %d and no response", s.pool.cfg.Target, c.method, resp.StatusCode)
	case ct == "application/json":
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxMessage))
		if err != nil {
			return nil, w.broken(ctx, s, c, err)
		}
		m, err := mcpio.DecodeMessage(data)
		if err != nil {
			return nil, newError(ErrBadResponse, err, "legacy upstream %s: undecodable response to %s: %v", s.pool.cfg.Target, c.method, err)
		}
		if r, ok := m.(*jsonrpc.Response); ok && r.ID == req.ID {
			answered = true
			return resultOf(r)
		}
		return nil, newError(ErrBadResponse, nil, "legacy upstream %s answered %s with a message that is not its response", s.pool.cfg.Target, c.method)
	case ct == "text/event-stream":
		var result json.RawMessage
		var rerr error
		found := false
		err := readSSE(resp.Body, func(data []byte) bool {
			m, err := mcpio.DecodeMessage(data)
			if err != nil {
				rerr = newError(ErrBadResponse, err, "legacy upstream %s: undecodable message on the %s stream: %v", s.pool.cfg.Target, c.method, err)
				return false
			}
			switch m := m.(type) {
			case *jsonrpc.Response:
				if m.ID == req.ID {
					result, rerr = resultOf(m)
					found, answered = true, true
					return false
				}
			case *jsonrpc.Request:
				if m.IsCall() {
					s.handleRequest(m, append(json.RawMessage(nil), data...), c)
				} else {
					s.handleNotification(m.Method, m.Params, c)
				}
			}
			return true
		})
		if found || rerr != nil {
			return result, rerr
		}
		return nil, w.broken(ctx, s, c, err)
	}
	return nil, newError(ErrBadResponse, nil, "legacy upstream %s answered %s with Content-Type %q", s.pool.cfg.Target, c.method, resp.Header.Get("Content-Type"))
}

// broken explains a response stream that ended before the response.
func (w *httpWire) broken(ctx context.Context, s *Session, c *call, cause error) error {
	if err := s.Err(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("legacy upstream %s: %s: %w", s.pool.cfg.Target, c.method, ctx.Err())
	}
	if cause == nil {
		cause = io.ErrUnexpectedEOF
	}
	return newError(ErrUnavailable, cause, "legacy upstream %s: the %s response stream ended before its response (%v)", s.pool.cfg.Target, c.method, cause)
}

func (w *httpWire) send(ctx context.Context, s *Session, msg jsonrpc.Message) error {
	resp, err := w.post(ctx, s, msg)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.Body.Close()
}

// readSSE reads a text/event-stream body and calls fn with the data of every
// "message" event until fn returns false or the stream ends. It returns the
// read error (nil at a clean end of stream).
func readSSE(r io.Reader, fn func(data []byte) bool) error {
	er := mcpio.NewEventReader(r, maxMessage)
	for {
		data, err := er.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if !fn(data) {
			return nil
		}
	}
}

// directParams is the size of params from which a request is encoded by
// encodeMessage itself.
const directParams = 64 << 10

// encodeMessage is jsonrpc.EncodeMessage, byte for byte. A request with
// large params that are already compact (the faces write them so) is
// written into one buffer of its final size: go-sdk's encoder would scan
// and copy the params twice, growing its buffer as it goes.
func encodeMessage(msg jsonrpc.Message) ([]byte, error) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || len(req.Params) < directParams || !rawjson.IsCompact(req.Params) {
		return jsonrpc.EncodeMessage(msg)
	}
	var id, method []byte
	var err error
	if req.ID.IsValid() {
		if id, err = rawjson.Marshal(req.ID.Raw()); err != nil {
			return nil, err
		}
	}
	if req.Method != "" {
		if method, err = rawjson.Marshal(req.Method); err != nil {
			return nil, err
		}
	}
	b := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"method":,"params":}`)+len(id)+len(method)+len(req.Params))
	b = append(b, `{"jsonrpc":"2.0"`...)
	if id != nil {
		b = append(append(b, `,"id":`...), id...)
	}
	if method != nil {
		b = append(append(b, `,"method":`...), method...)
	}
	b = append(append(b, `,"params":`...), req.Params...)
	return append(b, '}'), nil
}
