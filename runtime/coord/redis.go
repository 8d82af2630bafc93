package coord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// Redis is a Coordinator in a Redis (or Valkey) shared by the replicas. Under
// the store's key prefix P:
//
//	P:lease:{<name>}  the holder's token, with a PX expiry (SET NX PX); renew
//	                  and release compare the token first (Lua), so only the
//	                  holder extends or drops it. Each script touches this one
//	                  key; the hash tag is the lease's name, so a Redis Cluster
//	                  spreads leases over its nodes by task.
//	P:topic:<topic>   a pub/sub channel (no key)
//
// Every subscription of the process shares one pub/sub connection. On a
// Redis Cluster that is plain PUBLISH/SUBSCRIBE, which the cluster bus
// forwards to every node, so one connection to any node receives every
// topic. Sharded pub/sub (SPUBLISH/SSUBSCRIBE) would keep a message on its
// channel's shard, but a subscriber must then hold a connection to the
// primary of each channel's slot (one per node, re-made on every resharding
// and failover); at the bridge's rate (one message per task status change)
// the broadcast costs less than that bookkeeping, so it does not fit here.
// After a failover or a node restart go-redis re-subscribes on a new
// connection, and Subscribe's channel then receives a nil message (messages
// may have been missed): the watchers re-read the store.
type Redis struct {
	rdb    redis.UniversalClient
	prefix string
	log    *slog.Logger

	// waitReplicas > 0: a lease is taken or renewed only once that many
	// replicas have it (WAIT), so a Redis failover does not hand a lease
	// its holder still uses to a second replica. retryFor bounds how long
	// a lease operation rides out a failover before it fails.
	waitReplicas int
	waitTimeout  time.Duration
	retryFor     time.Duration

	// cmdMu orders this process's SUBSCRIBE and UNSUBSCRIBE commands as
	// its bookkeeping changed: an UNSUBSCRIBE overtaken by a later
	// SUBSCRIBE of the same channel would leave it unsubscribed.
	cmdMu     sync.Mutex
	mu        sync.Mutex
	ps        *redis.PubSub
	subs      map[string]map[*redisSub]struct{} // channel → subscribers
	confirmed map[string]bool                   // channels whose SUBSCRIBE Redis acknowledged
	waiting   map[string]chan struct{}          // closed when the channel's SUBSCRIBE is acknowledged
	closed    bool
}

type redisSub struct {
	ch   chan []byte
	done bool
}

var _ Coordinator = (*Redis)(nil)

// NewRedis returns a Coordinator on rdb whose keys and channels start with
// prefix + ":" (the store's prefix, so bridges sharing a Redis under
// different prefixes never see each other's leases). It does not own rdb;
// Close ends its pub/sub connection only.
func NewRedis(rdb redis.UniversalClient, prefix string, log *slog.Logger) *Redis {
	if log == nil {
		log = slog.Default()
	}
	return &Redis{rdb: rdb, prefix: prefix + ":", log: log,
		subs: map[string]map[*redisSub]struct{}{}, confirmed: map[string]bool{}, waiting: map[string]chan struct{}{}}
}

// WithDurability makes leases wait for n replicas (the store's
// --redis-wait-replicas, each WAIT up to timeout) and lease operations
// retry through a failover for up to retryFor (the store's
// --redis-failover-timeout; 0: no retry, as without WithDurability). It
// returns r.
func (r *Redis) WithDurability(n int, timeout, retryFor time.Duration) *Redis {
	r.waitReplicas, r.waitTimeout, r.retryFor = n, timeout, retryFor
	return r
}

// retry runs fn again while its error is what a failover looks like, for
// up to retryFor: a lease answer after the failover is better than an
// error, on which a caller may act as if it held the lease.
func (r *Redis) retry(ctx context.Context, fn func() error) error {
	start := time.Now()
	backoff := 20 * time.Millisecond
	for {
		err := fn()
		if err == nil || r.retryFor <= 0 || !sessionmap.TransientRedisError(err) || time.Since(start) >= r.retryFor {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 250*time.Millisecond)
	}
}

// replicated WAITs on c for the configured replicas; false when fewer
// acknowledged in time.
func (r *Redis) replicated(ctx context.Context, c *redis.Tx) (bool, error) {
	if r.waitReplicas <= 0 {
		return true, nil
	}
	n, err := c.Wait(ctx, r.waitReplicas, r.waitTimeout).Result()
	if err != nil {
		return false, err
	}
	return n >= int64(r.waitReplicas), nil
}

func (r *Redis) leaseKey(name string) string { return r.prefix + "lease:{" + name + "}" }
func (r *Redis) channel(topic string) string { return r.prefix + "topic:" + topic }

// renewScript and releaseScript change a lease only for its holder.
var (
	renewScript = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)
	releaseScript = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)
)

// Acquire implements Leases: SET key holder NX PX ttl.
// A lease not replicated in time is given up (Acquire) or reported lost
// (Renew): the safe side, since a replica that believes it holds a lease
// acts alone.
func (r *Redis) Acquire(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	key := r.leaseKey(name)
	var ok bool
	err := r.retry(ctx, func() error {
		// One connection (WATCH only pins it), so WAIT counts this write.
		return r.rdb.Watch(ctx, func(c *redis.Tx) error {
			got, err := c.SetNX(ctx, key, holder, ttl).Result()
			if err != nil || !got {
				if err == nil {
					// Held: by someone else, or by holder itself when an
					// earlier attempt's answer was lost.
					v, gerr := c.Get(ctx, key).Result()
					got, err = gerr == nil && v == holder, nil
				}
				if !got || err != nil {
					ok = false
					return err
				}
			}
			rep, err := r.replicated(ctx, c)
			if err != nil {
				return err
			}
			if !rep {
				_ = releaseScript.Run(ctx, c, []string{key}, holder).Err()
			}
			ok = rep
			return nil
		}, key)
	})
	if err != nil {
		return false, fmt.Errorf("coord: acquire lease: %w", err)
	}
	return ok, nil
}

// Renew implements Leases.
func (r *Redis) Renew(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	key := r.leaseKey(name)
	var ok bool
	err := r.retry(ctx, func() error {
		return r.rdb.Watch(ctx, func(c *redis.Tx) error {
			n, err := renewScript.Run(ctx, c, []string{key}, holder, ttl.Milliseconds()).Int()
			if err != nil {
				return err
			}
			if n != 1 {
				ok = false
				return nil
			}
			ok, err = r.replicated(ctx, c)
			return err
		}, key)
	})
	if err != nil {
		return false, fmt.Errorf("coord: renew lease: %w", err)
	}
	return ok, nil
}

// Release implements Leases.
func (r *Redis) Release(ctx context.Context, name, holder string) error {
	if err := releaseScript.Run(ctx, r.rdb, []string{r.leaseKey(name)}, holder).Err(); err != nil {
		return fmt.Errorf("coord: release lease: %w", err)
	}
	return nil
}

// Holder implements Leases.
func (r *Redis) Holder(ctx context.Context, name string) (string, error) {
	v, err := r.rdb.Get(ctx, r.leaseKey(name)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("coord: read lease: %w", err)
	}
	return v, nil
}

// Publish implements Fanout (PUBLISH).
func (r *Redis) Publish(ctx context.Context, topic string, msg []byte) error {
	if err := r.rdb.Publish(ctx, r.channel(topic), msg).Err(); err != nil {
		return fmt.Errorf("coord: publish: %w", err)
	}
	return nil
}

// Subscribe implements Fanout. It returns once Redis acknowledged the
// SUBSCRIBE, so every message published after it returns is delivered.
func (r *Redis) Subscribe(ctx context.Context, topic string) (<-chan []byte, func(), error) {
	ch := r.channel(topic)
	s := &redisSub{ch: make(chan []byte, subBuffer)}
	r.cmdMu.Lock()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		r.cmdMu.Unlock()
		return nil, nil, errors.New("coord: closed")
	}
	if r.ps == nil {
		r.ps = r.rdb.Subscribe(context.Background())
		go r.dispatch(r.ps.ChannelWithSubscriptions(redis.WithChannelSize(1024)))
	}
	first := len(r.subs[ch]) == 0
	if first {
		r.subs[ch] = map[*redisSub]struct{}{}
	}
	r.subs[ch][s] = struct{}{}
	wait := r.waiting[ch]
	if !r.confirmed[ch] && wait == nil {
		wait = make(chan struct{})
		r.waiting[ch] = wait
	}
	ps := r.ps
	r.mu.Unlock()
	cancel := func() { r.unsubscribe(ch, s) }
	var err error
	if first {
		err = ps.Subscribe(ctx, ch)
	}
	r.cmdMu.Unlock()
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("coord: subscribe: %w", err)
	}
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			cancel()
			return nil, nil, fmt.Errorf("coord: subscribe: %w", ctx.Err())
		}
	}
	return s.ch, cancel, nil
}

func (r *Redis) unsubscribe(ch string, s *redisSub) {
	r.cmdMu.Lock()
	defer r.cmdMu.Unlock()
	r.mu.Lock()
	if s.done {
		r.mu.Unlock()
		return
	}
	s.done = true
	close(s.ch)
	delete(r.subs[ch], s)
	last := len(r.subs[ch]) == 0
	if last {
		delete(r.subs, ch)
		delete(r.confirmed, ch)
	}
	ps, closed := r.ps, r.closed
	r.mu.Unlock()
	if last && !closed {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := ps.Unsubscribe(ctx, ch); err != nil {
			r.log.Debug("coord: unsubscribe failed", "err", err)
		}
	}
}

// dispatch hands every message to the channel's subscribers and every
// SUBSCRIBE acknowledgement to the Subscribe waiting for it.
func (r *Redis) dispatch(in <-chan any) {
	for v := range in {
		switch m := v.(type) {
		case *redis.Subscription:
			if m.Kind != "subscribe" {
				continue
			}
			r.mu.Lock()
			again := r.confirmed[m.Channel]
			if _, wanted := r.subs[m.Channel]; wanted {
				r.confirmed[m.Channel] = true
			}
			if w := r.waiting[m.Channel]; w != nil {
				close(w)
				delete(r.waiting, m.Channel)
			}
			if again {
				// Re-subscribed after a reconnect: say so (nil message).
				r.deliver(m.Channel, nil)
			}
			r.mu.Unlock()
		case *redis.Message:
			r.mu.Lock()
			r.deliver(m.Channel, []byte(m.Payload))
			r.mu.Unlock()
		}
	}
}

// deliver offers msg to ch's subscribers without blocking (r.mu held).
func (r *Redis) deliver(ch string, msg []byte) {
	for s := range r.subs[ch] {
		select {
		case s.ch <- msg:
		default: // behind: dropped (at most once)
		}
	}
}

// Close ends the pub/sub connection and every subscription.
func (r *Redis) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	ps := r.ps
	for ch, subs := range r.subs {
		for s := range subs {
			s.done = true
			close(s.ch)
		}
		delete(r.subs, ch)
	}
	r.mu.Unlock()
	if ps != nil {
		return ps.Close()
	}
	return nil
}
