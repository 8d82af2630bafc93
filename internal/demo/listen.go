package demo

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// Task push (M-47, M-63) is served here rather than by go-sdk: v1.8.0 parses
// subscriptions/listen into a typed filter without taskIds, acknowledges only
// its own notification types, and has no exported way to send a custom
// notification such as notifications/tasks (docs/ARCHITECTURE.md, What
// go-sdk v1.8.0 leaves to the bridge). Its
// StreamableServerTransport cannot be used outside StreamableHTTPHandler for
// 2026-07-28 either (the protocol version travels in an unexported context
// key). So a listen that asks for taskIds is taken before go-sdk sees it:
// on HTTP by the front handler (SSE framing in http.go), on stdio by the
// mcp.Connection wrapper (stdio.go). Messages are go-sdk jsonrpc values
// encoded by jsonrpc.EncodeMessage; only the event loop below is ours.

// checkListen validates a task listen and returns the task ids the server
// agrees to serve: the caller's own live tasks (others are silently left
// out, so existence does not leak).
func (s *Server) checkListen(principal string, p modern.ListenParams) ([]string, *rpc.Error) {
	if p.Meta == nil {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: missing _meta with %q and %q", mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities)
	}
	if err := p.Meta.Validate(); err != nil { // M-37
		return nil, rpc.As(err)
	}
	if p.Meta.ProtocolVersion != ProtocolVersion {
		return nil, modern.ErrUnsupportedProtocolVersion(p.Meta.ProtocolVersion, []string{ProtocolVersion})
	}
	if !declaredCaps(*p.Meta).HasTasksExtension() { // M-61
		s.count(func(c *Counters) { c.CapabilityFails++ })
		return nil, modern.ErrTasksExtensionRequired("subscriptions/listen with notifications.taskIds")
	}
	acked := []string{}
	seen := map[string]bool{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range p.Notifications.TaskIDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		if _, err := s.lookupLocked(id, principal); err == nil {
			acked = append(acked, id)
		}
	}
	return acked, nil
}

// runListen serves one task listen: the acknowledgement first, then the
// current DetailedTask of each acknowledged task, then one
// notifications/tasks per change, every message carrying the listen's
// subscriptionId (M-47, M-63). It returns when ctx ends (the client went
// away: nothing more is sent) or after the graceful listen result once the
// server closes. ping, if not nil, is called every ListenKeepAlive.
func (s *Server) runListen(ctx context.Context, id jsonrpc.ID, acked []string,
	send func(jsonrpc.Message) error, ping func() error) error {
	sub := s.hub.subscribe(acked)
	defer func() {
		s.hub.unsubscribe(sub)
		if f := s.listenEnded.Load(); f != nil {
			(*f)()
		}
	}()
	s.count(func(c *Counters) { c.ListenStreams++ })

	if err := mcpio.AcknowledgeListen(send, id, acked); err != nil {
		return err
	}
	push := func(ids []string) error {
		for _, tid := range ids {
			s.mu.Lock()
			t, ok := s.st.tasks[tid]
			var d modern.DetailedTask
			if ok {
				d = t.detailed()
			}
			s.mu.Unlock()
			if !ok {
				continue // expired and purged: nothing left to report
			}
			m, err := notification(modern.NotificationTasks, modern.TaskStatusNotificationParams{DetailedTask: d, SubscriptionID: id})
			if err != nil {
				return err
			}
			if err := send(m); err != nil {
				return err
			}
			s.count(func(c *Counters) { c.TaskNotifies++ })
		}
		return nil
	}
	// The current state first, so a subscriber never misses a change that
	// happened before it subscribed; every later change follows.
	if err := push(acked); err != nil {
		return err
	}
	tick, stop := mcpio.ListenKeepAlive(ping, s.opts.ListenKeepAlive)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.closed:
			return mcpio.EndListen(send, id, s.resultMeta())
		case <-sub.wake:
			if err := push(s.hub.take(sub)); err != nil {
				return err
			}
		case <-tick:
			if err := ping(); err != nil {
				return err
			}
		}
	}
}

func notification(method string, params any) (*jsonrpc.Request, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	return &jsonrpc.Request{Method: method, Params: b}, nil
}

// LiveListens returns the number of task listen streams being served.
func (s *Server) LiveListens() int { return s.hub.count() }
