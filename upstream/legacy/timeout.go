package legacyup

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// DefaultTimeout is Config.Timeout's default: five minutes of silence. A
// legacy upstream answers a task-creating tools/call, tasks/get, tasks/cancel
// and the list methods at once; only a tool it runs synchronously may take a
// while, and long work is what tasks are for. Five minutes is well beyond
// what common clients wait for one request without progress (the
// TypeScript SDK gives up after 60 s), so the bound never cuts a call a
// client still waits for; every message the upstream sends for the call
// starts the period again.
const DefaultTimeout = 5 * time.Minute

// errSilent is the cause of a call cut by Config.Timeout.
var errSilent = errors.New("legacy upstream: no answer within the timeout")

// TimeoutData is the data of the error a call cut by Config.Timeout
// answers: what did not answer, what for, and the bound (so that a client
// or an operator can tell it from a failure of the upstream itself).
type TimeoutData struct {
	Upstream  string `json:"upstream"`
	Method    string `json:"method"`
	TimeoutMs int64  `json:"timeoutMs"`
	Setting   string `json:"setting"`
}

// timeout is the effective Config.Timeout (0: none).
func (p *Pool) timeout() time.Duration {
	switch {
	case p.cfg.Timeout == 0:
		return DefaultTimeout
	case p.cfg.Timeout < 0:
		return 0
	}
	return p.cfg.Timeout
}

// silence bounds the upstream's silence on one call: it fires after d
// without a message for the call. While the upstream waits for the bridge
// (a server→client request of the call that the bridge has not answered
// yet: the client's input is awaited, bounded by its own rules) the bound
// is held.
type silence struct {
	d time.Duration

	mu      sync.Mutex
	t       *time.Timer
	waiting map[string]bool // raw ids of the call's unanswered server→client requests
	stopped bool
}

func newSilence(d time.Duration, fire func()) *silence {
	b := &silence{d: d, waiting: map[string]bool{}}
	b.t = time.AfterFunc(d, fire)
	return b
}

// touch starts the period again: the upstream said something for the call.
func (b *silence) touch() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.stopped && len(b.waiting) == 0 {
		b.t.Reset(b.d)
	}
}

// hold stops the clock until the bridge answers the upstream's request id.
func (b *silence) hold(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.waiting[id] = true
	b.t.Stop()
}

// release restarts the clock once the bridge answered every request held.
func (b *silence) release(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.waiting[id] {
		return
	}
	delete(b.waiting, id)
	if !b.stopped && len(b.waiting) == 0 {
		b.t.Reset(b.d)
	}
}

func (b *silence) stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
	b.t.Stop()
}

// bound puts call c under Config.Timeout (a wait the bridge holds for a
// task, CallOptions.Wait, stays unbounded): when the upstream stays silent
// for that long the returned context ends — which cancels the call upstream
// (notifications/cancelled naming it, 2025-11-25 cancellation; on a wait,
// L-86) — and finish, given the call's outcome, logs a WARN and returns
// the retryable -32603 of silent instead.
func (s *Session) bound(ctx context.Context, c *call) (context.Context, func(json.RawMessage, error) (json.RawMessage, error)) {
	d := s.pool.timeout()
	if d <= 0 || c.opts.Wait {
		return ctx, func(res json.RawMessage, err error) (json.RawMessage, error) { return res, err }
	}
	parent := ctx
	ctx, cancel := context.WithCancelCause(ctx)
	c.silence = newSilence(d, func() { cancel(errSilent) })
	return ctx, func(res json.RawMessage, err error) (json.RawMessage, error) {
		c.silence.stop()
		silent := err != nil && parent.Err() == nil && errors.Is(context.Cause(ctx), errSilent)
		cancel(nil)
		s.mu.Lock()
		for id, b := range s.sides {
			if b == c.silence {
				delete(s.sides, id)
			}
		}
		s.mu.Unlock()
		if !silent {
			return res, err
		}
		s.pool.logger().Warn("legacy upstream: the upstream did not answer a request in time; the bridge cancelled it upstream and told the client to try again later",
			"upstream", s.pool.cfg.Target, "method", c.method, "timeout", d.String(), "setting", "--upstream-timeout")
		return nil, s.silent(c.method, d)
	}
}

// sendBound bounds delivering one message (an answer, a notification) by
// Config.Timeout: an upstream that does not take it holds nobody for longer.
func (s *Session) sendBound(ctx context.Context) (context.Context, context.CancelFunc) {
	if d := s.pool.timeout(); d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return ctx, func() {}
}

// answered releases the bound held for the upstream's request id (Respond).
func (s *Session) answered(id jsonrpc.ID) {
	key := string(rawID(id))
	s.mu.Lock()
	b := s.sides[key]
	delete(s.sides, key)
	s.mu.Unlock()
	if b != nil {
		b.release(key)
	}
}

// silent is the error of a call cut by Config.Timeout: retryable, in words
// that say what happened and what to do, naming the upstream and the bound.
func (s *Session) silent(method string, d time.Duration) error {
	return &Error{
		RPC: rpc.WithData(rpc.CodeInternalError,
			"legacy upstream "+s.pool.cfg.Target+" did not answer "+method+" within "+d.String()+
				" (the bridge's --upstream-timeout): it is overloaded or stalled; the bridge cancelled the request there; try again later",
			TimeoutData{Upstream: s.pool.cfg.Target, Method: method, TimeoutMs: d.Milliseconds(), Setting: "--upstream-timeout"}),
		Kind:  ErrUnavailable,
		Cause: context.DeadlineExceeded,
	}
}

// Timeout reports whether err is a call cut by Config.Timeout.
func Timeout(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == ErrUnavailable && errors.Is(e.Cause, context.DeadlineExceeded)
}
