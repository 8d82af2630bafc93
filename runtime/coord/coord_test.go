package coord_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/runtime/coord"
)

// conformance checks what every Coordinator promises. expire returns once
// the lease name has expired (it advances a clock, or waits for Redis).
func conformance(t *testing.T, c coord.Coordinator, ttl time.Duration, expire func(name string)) {
	ctx := context.Background()
	a, b := coord.NewToken("a"), coord.NewToken("b")

	t.Run("lease", func(t *testing.T) {
		if ok, err := c.Acquire(ctx, "L", a, ttl); err != nil || !ok {
			t.Fatalf("first acquire = %v, %v; want true", ok, err)
		}
		if ok, err := c.Acquire(ctx, "L", b, ttl); err != nil || ok {
			t.Fatalf("second holder acquired a held lease (%v, %v)", ok, err)
		}
		if h, _ := c.Holder(ctx, "L"); h != a {
			t.Fatalf("holder = %q, want %q", h, a)
		}
		if ok, err := c.Renew(ctx, "L", b, ttl); err != nil || ok {
			t.Fatalf("a non-holder renewed (%v, %v)", ok, err)
		}
		if err := c.Release(ctx, "L", b); err != nil {
			t.Fatal(err)
		}
		if h, _ := c.Holder(ctx, "L"); h != a {
			t.Fatalf("a non-holder's release dropped the lease: holder %q", h)
		}
		if ok, err := c.Renew(ctx, "L", a, ttl); err != nil || !ok {
			t.Fatalf("holder renew = %v, %v", ok, err)
		}
		if err := c.Release(ctx, "L", a); err != nil {
			t.Fatal(err)
		}
		if ok, err := c.Acquire(ctx, "L", b, ttl); err != nil || !ok {
			t.Fatalf("acquire after release = %v, %v", ok, err)
		}
	})

	t.Run("expiry", func(t *testing.T) {
		if ok, _ := c.Acquire(ctx, "E", a, ttl); !ok {
			t.Fatal("acquire failed")
		}
		expire("E")
		if h, _ := c.Holder(ctx, "E"); h != "" {
			t.Fatalf("holder after expiry = %q", h)
		}
		if ok, _ := c.Renew(ctx, "E", a, ttl); ok {
			t.Fatal("an expired lease was renewed")
		}
		if ok, _ := c.Acquire(ctx, "E", b, ttl); !ok {
			t.Fatal("an expired lease could not be taken")
		}
	})

	t.Run("fanout", func(t *testing.T) {
		m1, cancel1, err := c.Subscribe(ctx, "T")
		if err != nil {
			t.Fatal(err)
		}
		m2, cancel2, err := c.Subscribe(ctx, "T")
		if err != nil {
			t.Fatal(err)
		}
		other, cancel3, err := c.Subscribe(ctx, "U")
		if err != nil {
			t.Fatal(err)
		}
		defer cancel3()
		if err := c.Publish(ctx, "T", []byte("hello")); err != nil {
			t.Fatal(err)
		}
		for _, m := range []<-chan []byte{m1, m2} {
			select {
			case got := <-m:
				if string(got) != "hello" {
					t.Fatalf("got %q", got)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("message not delivered within 10s")
			}
		}
		cancel1()
		if _, ok := <-m1; ok {
			t.Fatal("channel open after cancel")
		}
		// The remaining subscriber still gets messages; the other topic's none.
		_ = c.Publish(ctx, "T", []byte("again"))
		select {
		case got := <-m2:
			if string(got) != "again" {
				t.Fatalf("got %q", got)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("second message not delivered")
		}
		cancel2()
		select {
		case got := <-other:
			t.Fatalf("topic U received %q published on T", got)
		default:
		}
		// The last subscriber left and a new one comes at once (a task's
		// watcher stopping as the next starts): it gets the messages.
		for i := range 20 {
			m, cancel, err := c.Subscribe(ctx, "T")
			if err != nil {
				t.Fatal(err)
			}
			_ = c.Publish(ctx, "T", []byte("round"))
			select {
			case got := <-m:
				if string(got) != "round" {
					t.Fatalf("round %d: got %q", i, got)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("round %d: message not delivered after resubscribing", i)
			}
			cancel()
		}
	})
}

func TestLocal(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	c := coord.NewLocal(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	conformance(t, c, time.Second, func(string) { mu.Lock(); now = now.Add(time.Second); mu.Unlock() })
}

func TestRedis(t *testing.T) {
	srv := redistest.Start(t)
	o, err := redis.ParseURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(o)
	t.Cleanup(func() { _ = rdb.Close() })
	c := coord.NewRedis(rdb, srv.Prefix(t), slog.New(slog.DiscardHandler))
	t.Cleanup(func() { _ = c.Close() })
	const ttl = 200 * time.Millisecond
	conformance(t, c, ttl, func(name string) {
		// Redis expires keys on its own clock: poll the holder with a
		// deadline.
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			if h, err := c.Holder(context.Background(), name); err == nil && h == "" {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("lease %s did not expire within 10s", name)
	})
}
