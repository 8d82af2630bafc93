package main

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// probe writes tasks through the store's own code (the same Redis, the
// same --redis-wait-replicas, the default failover timeout) as fast as the
// store acknowledges them, one write at a time, and remembers when each was
// acknowledged: the stall a failover costs a write is the gap from the kill
// of the primary to the first write acknowledged after it; every
// acknowledged task is read back at the end (lost writes).
type probe struct {
	st     *sessionmap.Redis
	done   chan struct{}
	exited chan struct{}

	mu     sync.Mutex
	acked  map[string]time.Time
	times  []time.Time // acknowledgement times, in order
	errors int
}

var probeScope = sessionmap.Scope{Session: "chaos-probe"}

func startProbe(ctx context.Context, url string, wait int) (*probe, error) {
	st, err := sessionmap.OpenRedis(ctx, sessionmap.RedisConfig{URL: url, Prefix: "chaos-probe", WaitReplicas: wait},
		sessionmap.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		return nil, err
	}
	p := &probe{st: st, done: make(chan struct{}), exited: make(chan struct{}), acked: map[string]time.Time{}}
	go p.run(ctx)
	return p, nil
}

func (p *probe) run(ctx context.Context) {
	defer close(p.exited)
	ttl := int64(time.Hour / time.Millisecond)
	for {
		select {
		case <-p.done:
			return
		case <-ctx.Done():
			return
		default:
		}
		id := sessionmap.NewTaskID()
		err := p.st.CreateTask(ctx, sessionmap.Task{ID: id, Scope: probeScope, Direction: sessionmap.LegacyToModern,
			Origin: sessionmap.OriginUpstreamTask, TTLMs: &ttl})
		now := time.Now()
		p.mu.Lock()
		if err != nil {
			p.errors++
		} else {
			p.acked[id] = now
			p.times = append(p.times, now)
		}
		p.mu.Unlock()
		// A steady rate (about 200 writes a second at most) keeps the
		// measured stall within 5 ms of the truth without loading Redis.
		select {
		case <-time.After(5 * time.Millisecond):
		case <-p.done:
			return
		}
	}
}

func (p *probe) stop() {
	select {
	case <-p.done:
	default:
		close(p.done)
	}
	<-p.exited
}

func (p *probe) close() {
	p.stop()
	_ = p.st.Close()
}

type probeFigures struct {
	acked, lost, errors int
	stalls              []time.Duration
}

// figures reads every acknowledged probe task back and measures the stall
// after each kill.
func (p *probe) figures(ctx context.Context, kills []time.Time) probeFigures {
	p.mu.Lock()
	defer p.mu.Unlock()
	f := probeFigures{acked: len(p.acked), errors: p.errors}
	for id := range p.acked {
		if _, err := p.st.GetTask(ctx, probeScope, id); err != nil {
			f.lost++
		}
	}
	for _, k := range kills {
		i, _ := slices.BinarySearchFunc(p.times, k, func(a, b time.Time) int { return a.Compare(b) })
		if i < len(p.times) {
			f.stalls = append(f.stalls, p.times[i].Sub(k))
		}
	}
	return f
}
