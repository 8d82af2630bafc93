package bridgeload

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// ---- 8. durable task creation, one writer and many -------------------

// StoreResult compares durable CreateTask latency with one writer and with
// Writers concurrent ones on the bridge's Badger store (each create durable through its
// group commit, as deployed).
type StoreResult struct {
	Writers        int
	Single, Shared Summary // per create
	SingleRate     float64 // creates per second, one writer
	SharedRate     float64 // creates per second, all writers together
}

// StoreWriters opens a Badger store in dir and times perWriter creates by
// one writer, then perWriter creates by each of writers concurrent writers.
func StoreWriters(ctx context.Context, dir string, writers, perWriter int) (StoreResult, error) {
	res := StoreResult{Writers: writers}
	st, err := sessionmap.OpenBadger(dir, sessionmap.WithGCInterval(0),
		sessionmap.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return res, fmt.Errorf("store: %w", err)
	}
	defer st.Close()
	sc := sessionmap.Scope{Principal: sessionmap.PrincipalFromAuthorization("Bearer bridgeload"), Session: "s"}
	create := func() (time.Duration, error) {
		ttl := int64(3_600_000)
		t := sessionmap.Task{ID: sessionmap.NewTaskID(), Scope: sc, Direction: sessionmap.LegacyToModern,
			Origin: sessionmap.OriginUpstreamTask, Upstream: "http://127.0.0.1/mcp",
			UpstreamTaskID: sessionmap.NewTaskID(), Method: "tools/call", ToolName: "slow_task",
			TTLMs: &ttl, RequestedTTLMs: &ttl, CreatedAt: time.Now()}
		t0 := time.Now()
		err := st.CreateTask(ctx, t)
		return time.Since(t0), err
	}
	run := func(n int) ([]time.Duration, time.Duration, error) {
		lat := make([][]time.Duration, n)
		errs := make([]error, n)
		start := time.Now()
		var wg sync.WaitGroup
		for w := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range perWriter {
					d, err := create()
					if err != nil {
						errs[w] = err
						return
					}
					lat[w] = append(lat[w], d)
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		var all []time.Duration
		for w := range n {
			if errs[w] != nil {
				return nil, 0, fmt.Errorf("store: create: %w", errs[w])
			}
			all = append(all, lat[w]...)
		}
		return all, elapsed, nil
	}
	if _, _, err := run(1); err != nil { // warm-up: files, memtable
		return res, err
	}
	one, e1, err := run(1)
	if err != nil {
		return res, err
	}
	many, eN, err := run(writers)
	if err != nil {
		return res, err
	}
	res.Single, res.Shared = Summarize(one), Summarize(many)
	res.SingleRate = float64(len(one)) / e1.Seconds()
	res.SharedRate = float64(len(many)) / eN.Seconds()
	return res, ctx.Err()
}
