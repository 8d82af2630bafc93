package modernup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/modern"
)

// metaSubscriptionID correlates listen-stream messages with the listen request (M-14).
const metaSubscriptionID = modern.MetaKeySubscriptionID

// DefaultAckTimeout bounds the wait for notifications/subscriptions/acknowledged,
// the first message of a subscription (M-47), when Client.AckTimeout is 0.
const DefaultAckTimeout = 10 * time.Second

// Notification is one notification read from a subscription.
type Notification struct {
	Method string
	Params json.RawMessage
}

// Stream is an open subscriptions/listen subscription.
type Stream struct {
	// Ack is params.notifications of the acknowledgement: the filter the
	// upstream agreed to serve, to compare with the request (M-15, M-33).
	Ack json.RawMessage
	// C delivers the subscription's notifications (without the
	// acknowledgement). It is closed when the subscription ends. A consumer
	// that falls behind loses the oldest buffered notifications, never the
	// newest.
	C <-chan Notification

	cancel context.CancelFunc
	done   chan struct{}
	err    error
	q      *noteQueue
}

// Err reports why the subscription ended, once C is closed: nil when the
// upstream ended it gracefully with a result, the context error when it was
// closed by us, otherwise the failure (ErrUnavailable after a reconnect is
// needed, M-14).
func (s *Stream) Err() error {
	<-s.done
	return s.err
}

// Done is closed when the subscription has ended.
func (s *Stream) Done() <-chan struct{} { return s.done }

// Close ends the subscription: on HTTP by closing its stream, on stdio with
// notifications/cancelled for the listen request (M-12). It does not wait.
func (s *Stream) Close() { s.cancel() }

// noteQueue is the bounded buffer between the connection's reader (which
// must never block) and the consumer.
type noteQueue struct {
	mu     sync.Mutex
	ch     chan Notification
	closed bool
}

func (q *noteQueue) push(n Notification) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	for {
		select {
		case q.ch <- n:
			return
		default:
		}
		select { // full: drop the oldest so the newest state always arrives
		case <-q.ch:
		default:
		}
	}
}

func (q *noteQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		close(q.ch)
	}
}

// Listen opens subscriptions/listen with the given filter (the
// SubscriptionFilter object, e.g. {"toolsListChanged":true} or the tasks
// extension's {"taskIds":[...]}) and returns once the upstream acknowledged
// it. ctx bounds the whole subscription; Close ends it early. A listen that
// the upstream rejects returns its JSON-RPC error.
func (c *Client) Listen(ctx context.Context, filter json.RawMessage, opts CallOptions) (*Stream, error) {
	return c.listen(ctx, filter, opts, 64)
}

// listen is Listen with a buffer of queue notifications.
func (c *Client) listen(ctx context.Context, filter json.RawMessage, opts CallOptions, queue int) (*Stream, error) {
	if len(filter) == 0 {
		filter = json.RawMessage("{}")
	}
	params, err := json.Marshal(map[string]json.RawMessage{"notifications": filter})
	if err != nil {
		return nil, fmt.Errorf("upstream: encode listen params: %w", err)
	}
	o := opts
	o.OnNotify = nil // notifications go to the stream, not to a hook
	req, p, err := c.newRequest(modern.MethodSubscriptionsListen, params, &o)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	q := &noteQueue{ch: make(chan Notification, queue)}
	s := &Stream{C: q.ch, cancel: cancel, done: make(chan struct{}), q: q}
	ackCh := make(chan json.RawMessage, 1)
	var ackOnce sync.Once
	p.notify = func(n *jsonrpc.Request) {
		if n.Method == modern.NotificationSubscriptionsAcknowledged {
			var ap struct {
				Notifications json.RawMessage `json:"notifications"`
			}
			_ = json.Unmarshal(n.Params, &ap)
			ackOnce.Do(func() { ackCh <- ap.Notifications })
			return
		}
		q.push(Notification{Method: n.Method, Params: n.Params})
	}
	go func() {
		defer close(s.done)
		defer q.close()
		resp, err := c.roundTrip(sctx, req, p, &o)
		switch {
		case err != nil:
			s.err = c.classify(sctx, req.Method, err)
		case resp.Error != nil:
			var we *jsonrpc.Error
			if errors.As(resp.Error, &we) {
				s.err = we
			} else {
				s.err = c.unavailable(req.Method, resp.Error)
			}
		}
	}()
	ackTimeout := c.AckTimeout
	if ackTimeout <= 0 {
		ackTimeout = DefaultAckTimeout
	}
	timer := time.NewTimer(ackTimeout)
	defer timer.Stop()
	select {
	case a := <-ackCh:
		s.Ack = a
		return s, nil
	case <-s.done:
		select { // an ack that raced with the end still counts as "opened"
		case a := <-ackCh:
			s.Ack = a
			return s, nil
		default:
		}
		if s.err == nil {
			s.err = c.badResponse(req.Method, "subscription ended before it was acknowledged", nil)
		}
		return nil, s.err
	case <-timer.C:
		cancel()
		return nil, c.unavailable(req.Method, fmt.Errorf("no acknowledgement within %v", ackTimeout))
	case <-ctx.Done():
		cancel()
		<-s.done
		return nil, c.classify(ctx, req.Method, ctx.Err())
	}
}

// TaskStream is a subscription to notifications/tasks for some tasks (M-33).
type TaskStream struct {
	// Acked are the task ids the upstream agreed to report; the rest must be
	// polled (M-15).
	Acked []string
	// Tasks delivers the DetailedTask of every notifications/tasks; closed
	// when the subscription ends (then Err says why).
	Tasks <-chan *modern.DetailedTask

	s    *Stream
	done chan struct{}
}

// Err reports why the stream ended (see Stream.Err), once Tasks is closed.
func (t *TaskStream) Err() error {
	<-t.done
	return t.s.Err()
}

// Close ends the subscription.
func (t *TaskStream) Close() { t.s.Close() }

// ListenTasks subscribes to notifications/tasks for taskIDs (the tasks
// extension's filter field, M-33). Notifications that do not decode are
// dropped (a poll will catch the state).
//
// One listen may carry many tasks (a session's tasks share it): an upstream
// may send the current state of every task first (the embedded server
// does), each a complete DetailedTask (M-63), and a consumer that
// falls behind loses the oldest buffered notifications, which may be
// another task's last state. The buffer therefore holds two notifications
// per task on top of the usual 64.
func (c *Client) ListenTasks(ctx context.Context, taskIDs []string, opts CallOptions) (*TaskStream, error) {
	if taskIDs == nil {
		taskIDs = []string{}
	}
	filter, err := modern.SubscriptionFilter{TaskIDs: taskIDs}.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("upstream: encode listen filter: %w", err)
	}
	s, err := c.listen(ctx, filter, opts, 64+2*len(taskIDs))
	if err != nil {
		return nil, err
	}
	var ack modern.SubscriptionFilter
	if len(s.Ack) > 0 {
		if ack, err = modern.DecodeSubscriptionFilter(s.Ack); err != nil {
			s.Close()
			return nil, c.badResponse(modern.MethodSubscriptionsListen, "acknowledgement: "+err.Error(), err)
		}
	}
	ch := make(chan *modern.DetailedTask, 16)
	ts := &TaskStream{Acked: ack.TaskIDs, Tasks: ch, s: s, done: make(chan struct{})}
	// The caller's ids, sorted: a notification's task then keeps the
	// caller's copy of its id (one per watched task, its watcher's) rather
	// than a decoded one, 16 bytes per id for as long as the listen lasts
	// against a string of about 48 per kept task.
	ids := slices.Clone(taskIDs)
	slices.Sort(ids)
	go func() {
		defer close(ts.done)
		defer close(ch)
		for n := range s.C {
			if n.Method != modern.NotificationTasks {
				continue
			}
			p, err := modern.DecodeTaskStatusNotificationParams(n.Params)
			if err != nil {
				continue
			}
			d := p.DetailedTask
			if i, ok := slices.BinarySearch(ids, d.TaskID); ok {
				d.TaskID = ids[i]
			}
			compactTask(&d)
			select {
			case ch <- &d:
			case <-s.done:
				return
			}
		}
	}()
	return ts, nil
}
