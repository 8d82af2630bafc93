package modernface

import (
	"bytes"
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/mcpio"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/watch"
	"github.com/tasksbridge/tasksbridge/translate"
)

// Task push (M-33, M-47, M-63) is served by the face itself: go-sdk v1.8.0
// parses subscriptions/listen into a filter without taskIds and cannot send a
// custom notification (docs/ARCHITECTURE.md, What go-sdk v1.8.0 leaves to
// the bridge). A listen that asks for taskIds is taken
// before go-sdk sees it (HTTP front, stdio connection wrapper); its
// notifications come from the shared watcher of each task (one upstream poll
// stream per task however many listeners; docs/ARCHITECTURE.md, One watcher
// per upstream task).

// checkListen validates a task listen (M-37, M-61) and returns the task ids
// the face agrees to report: the caller's own (others are left out silently,
// so existence does not leak).
func (f *Face) checkListen(ctx context.Context, c *call, p modern.ListenParams) ([]string, *rpc.Error) {
	meta, err := translate.CheckModernTaskRequest(modern.MethodSubscriptionsListen, c.params)
	if err != nil {
		return nil, rpc.As(err)
	}
	c.meta = meta // runListen judges input requests by the listen's capabilities (M-39)
	if err := modern.CheckProtocolVersion(meta.ProtocolVersion, []string{modern.ProtocolVersion}); err != nil {
		return nil, modern.ErrUnsupportedProtocolVersion(meta.ProtocolVersion, f.opts.SupportedVersions)
	}
	acked := []string{}
	seen := map[string]bool{}
	for _, id := range p.Notifications.TaskIDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		if _, err := f.store.GetTask(ctx, c.scope(), id); err == nil {
			acked = append(acked, id)
		}
	}
	return acked, nil
}

// runListen serves one task listen: the acknowledgement first, then the
// current DetailedTask of each acknowledged task, then one notifications/tasks
// per change, each carrying the listen's subscriptionId (M-47, M-63). It
// returns when ctx ends (the client left: nothing more is sent) or after the
// graceful listen result when the face closes.
func (f *Face) runListen(ctx context.Context, c *call, id jsonrpc.ID, acked []string, send func(jsonrpc.Message) error, ping func() error) error {
	f.mu.Lock()
	f.listens++
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.listens--
		f.mu.Unlock()
	}()
	if err := mcpio.AcknowledgeListen(send, id, acked); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changed := make(chan string, 64)
	subs := map[string]*watch.Subscription{}
	last := map[string][]byte{}
	push := func(taskID string, d modern.DetailedTask) error {
		if d.Status == modern.StatusInputRequired && len(undeclared(c.caps(), d.InputRequests)) > 0 {
			// M-39: input requests go only to a request that declared their
			// capability; this listener is told nothing until the task moves
			// on (its tasks/get says what to declare).
			return nil
		}
		params, err := translate.TaskNotificationToModern(d, id)
		if err != nil {
			return err
		}
		b, err := params.MarshalJSON()
		if err != nil {
			return err
		}
		if bytes.Equal(last[taskID], b) {
			return nil // nothing new
		}
		last[taskID] = b
		return send(&jsonrpc.Request{Method: modern.NotificationTasks, Params: b})
	}
	for _, taskID := range acked {
		rec, err := f.lookup(ctx, c, taskID)
		if err != nil {
			continue
		}
		if rec.Status.Terminal() {
			if err := push(taskID, recordTask(rec)); err != nil {
				return err
			}
			continue
		}
		rt := f.runtime(rec, c.principal, c.authorization, nil)
		if err := push(taskID, rt.view(recordTask(rec))); err != nil {
			return err
		}
		sub, err := f.watch.Attach(ctx, rt.key)
		if err != nil {
			continue
		}
		subs[taskID] = sub
		go func(taskID string, sub *watch.Subscription, rt *taskRT) {
			rt.mu.Lock()
			inputs := rt.changed
			rt.mu.Unlock()
			for {
				select {
				case _, ok := <-sub.C:
					if !ok {
						return
					}
				case <-inputs: // an answer changed the outstanding input
					rt.mu.Lock()
					inputs = rt.changed
					rt.mu.Unlock()
				case <-ctx.Done():
					return
				}
				select {
				case changed <- taskID:
				case <-ctx.Done():
					return
				}
			}
		}(taskID, sub, rt)
	}
	tick, stop := mcpio.ListenKeepAlive(ping, f.opts.ListenKeepAlive)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-f.ctx.Done():
			return mcpio.EndListen(send, id, f.resultMeta())
		case taskID := <-changed:
			sub := subs[taskID]
			if sub == nil {
				continue
			}
			snap := sub.Latest()
			if snap.Task == nil {
				continue
			}
			rt := f.taskRT(taskID)
			d := *snap.Task
			if rt != nil {
				d = rt.view(d)
			}
			if err := push(taskID, d); err != nil {
				return err
			}
			if d.Status.IsTerminal() {
				sub.Close()
				delete(subs, taskID)
			}
		case <-tick:
			if err := ping(); err != nil {
				return err
			}
		}
	}
}
