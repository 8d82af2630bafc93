package legacyface

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// subscriptions carries a legacy session's resources/subscribe over to the
// 2026-07-28 subscriptions/listen (2026-07-28 has no sessions to hold a
// subscription): one upstream listen
// per session, opened with the session's resource URIs and the list-changed
// flags while the session has at least one subscription, reopened when the
// set changes, and re-listened after the stream breaks (M-14).
type subscriptions struct {
	s *session

	mu     sync.Mutex
	uris   map[string]bool
	authz  string
	stream *modernup.Stream
	gen    int
	closed bool
}

func (s *session) subscriptionsFor() *subscriptions {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subs == nil {
		s.subs = &subscriptions{s: s, uris: map[string]bool{}}
	}
	return s.subs
}

// subscribeHandler is go-sdk's SubscribeHandler: go-sdk records the
// subscription (so Server.ResourceUpdated reaches this session) once the
// upstream listen is open.
func (s *session) subscribeHandler(ctx context.Context, req *mcp.SubscribeRequest) error {
	if req.Params == nil || req.Params.URI == "" {
		return rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: uri is required")
	}
	ri := reqInfoFrom(ctx)
	sub := s.subscriptionsFor()
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if ri != nil && ri.authz != "" {
		sub.authz = ri.authz
	}
	if sub.uris[req.Params.URI] {
		return nil
	}
	sub.uris[req.Params.URI] = true
	if err := sub.reopenLocked(); err != nil {
		delete(sub.uris, req.Params.URI)
		return err
	}
	return nil
}

func (s *session) unsubscribeHandler(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	if req.Params == nil || req.Params.URI == "" {
		return rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: uri is required")
	}
	sub := s.subscriptionsFor()
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if !sub.uris[req.Params.URI] {
		return nil
	}
	delete(sub.uris, req.Params.URI)
	return sub.reopenLocked()
}

func (sub *subscriptions) filter() (json.RawMessage, error) {
	uris := make([]string, 0, len(sub.uris))
	for u := range sub.uris {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	return json.Marshal(map[string]any{
		"resourceSubscriptions": uris,
		"toolsListChanged":      true,
		"promptsListChanged":    true,
		"resourcesListChanged":  true,
	})
}

// reopenLocked replaces the upstream listen with one for the current set
// (the new one is acknowledged before the old one closes, so nothing is
// missed), or closes it when the set is empty. sub.mu is held.
func (sub *subscriptions) reopenLocked() error {
	if sub.closed {
		return rpc.Errorf(rpc.CodeInternalError, "session closed")
	}
	old := sub.stream
	sub.stream = nil
	sub.gen++
	if len(sub.uris) == 0 {
		if old != nil {
			old.Close()
		}
		return nil
	}
	st, cancel, err := sub.open()
	if err != nil {
		sub.stream = old
		return sub.s.b.upstreamError("resources/subscribe", false, err)
	}
	sub.stream = st
	if old != nil {
		old.Close()
	}
	gen := sub.gen
	sub.s.b.goBackground(func() {
		defer cancel()
		sub.pump(st, gen)
	})
	return nil
}

func (sub *subscriptions) open() (*modernup.Stream, context.CancelFunc, error) {
	f, err := sub.filter()
	if err != nil {
		return nil, nil, err
	}
	opts, _, err := sub.s.callOptions(&reqInfo{authz: sub.authz})
	if err != nil {
		return nil, nil, err
	}
	// The listen lives as long as the subscription, not as the request that
	// opened it; it ends with the session or the bridge.
	lctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-sub.s.done():
		case <-sub.s.b.drain.Done():
		case <-lctx.Done():
		}
		cancel()
	}()
	st, err := sub.s.b.up.Listen(lctx, f, opts)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return st, cancel, nil
}

// pump forwards the listen's notifications to the legacy client until the
// stream ends; an unexpected end re-listens with backoff.
func (sub *subscriptions) pump(st *modernup.Stream, gen int) {
	s := sub.s
	for n := range st.C {
		s.forwardListenNote(n)
	}
	err := st.Err()
	backoff := 500 * time.Millisecond
	for {
		sub.mu.Lock()
		if sub.closed || sub.gen != gen || len(sub.uris) == 0 {
			sub.mu.Unlock()
			return
		}
		sub.mu.Unlock()
		if err != nil && (errors.Is(err, context.Canceled) || s.b.drain.Err() != nil) {
			return
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-s.done():
			t.Stop()
			return
		case <-s.b.drain.Done():
			t.Stop()
			return
		}
		sub.mu.Lock()
		if sub.closed || sub.gen != gen {
			sub.mu.Unlock()
			return
		}
		if rerr := sub.reopenLocked(); rerr == nil {
			sub.mu.Unlock()
			return // the new pump took over
		}
		sub.mu.Unlock()
		backoff = min(backoff*2, 30*time.Second)
	}
}

func (sub *subscriptions) close() {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	sub.closed = true
	if sub.stream != nil {
		sub.stream.Close()
		sub.stream = nil
	}
}

// listChangedName names the placeholder feature the bridge adds to and
// removes from the session's own go-sdk server to make go-sdk send a
// list_changed notification (it has no API for sending one directly).
const listChangedName = "tasksbridge-list-changed"

// forwardListenNote relays one listen notification to the legacy client,
// without the 2026-only subscriptionId.
func (s *session) forwardListenNote(n modernup.Notification) {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	if srv == nil {
		return
	}
	switch n.Method {
	case modern.NotificationResourcesUpdated:
		var p mcp.ResourceUpdatedNotificationParams
		if json.Unmarshal(n.Params, &p) != nil || p.URI == "" {
			return
		}
		if p.Meta != nil {
			delete(p.Meta, modern.MetaKeySubscriptionID)
		}
		_ = srv.ResourceUpdated(context.Background(), &p)
	case modern.NotificationToolsListChanged:
		srv.AddTool(&mcp.Tool{Name: listChangedName, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		srv.RemoveTools(listChangedName)
	case modern.NotificationPromptsListChanged:
		srv.AddPrompt(&mcp.Prompt{Name: listChangedName},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{}, nil
			})
		srv.RemovePrompts(listChangedName)
	case modern.NotificationResourcesListChanged:
		uri := "tasksbridge:" + listChangedName
		srv.AddResource(&mcp.Resource{URI: uri, Name: listChangedName},
			func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{}, nil
			})
		srv.RemoveResources(uri)
	}
}
