package sessionmap

import (
	"context"
	"errors"
	"sync"

	"github.com/dgraph-io/badger/v4"
)

// Group commit without read stalls.
//
// Badger's own transaction timestamps make every new transaction, read or
// write, wait until all commits already handed a timestamp are applied, and
// with SyncWrites that includes their fsync. Reads then queue behind a
// writer's fsync, and concurrent writers barely share one: each new writer
// first waits for the others.
//
// The store therefore runs Badger in managed mode and hands out timestamps
// itself (txnClock). A transaction reads at the newest timestamp below which
// every commit has returned from Badger, which with SyncWrites means it is
// fsynced: readers never wait and never see a write that a crash could still
// take back (architecture invariant 1: no handle before it is durable, and no
// status a client saw can move back). Writers commit without waiting for each
// other, so Badger's single write goroutine collects every commit that arrives
// during one fsync into the next batch: one fsync for all of them. Each writer
// returns only when its own batch is synced.

// txnClock is the timestamp oracle of a managed-mode Badger.
type txnClock struct {
	db *badger.DB

	commitMu sync.Mutex // orders timestamp assignment with the hand-off to Badger's write channel

	mu        sync.Mutex
	next      uint64          // next commit timestamp
	doneUntil uint64          // every commit at or below it has returned (durable or failed)
	finished  map[uint64]bool // returned commits above doneUntil (they finish out of order)
	advanced  chan struct{}   // closed and replaced whenever doneUntil moves
	reads     map[uint64]int  // read timestamps of open transactions, with counts
	discard   uint64          // last value passed to SetDiscardTs
	readOnly  bool
}

func newTxnClock(db *badger.DB, readOnly bool) *txnClock {
	last := db.MaxVersion()
	return &txnClock{db: db, next: last + 1, doneUntil: last, discard: 0, readOnly: readOnly,
		finished: map[uint64]bool{}, advanced: make(chan struct{}), reads: map[uint64]int{}}
}

// begin opens a transaction reading at the newest durable snapshot. Call
// end with the returned timestamp when done with it.
func (c *txnClock) begin(update bool) (*badger.Txn, uint64) {
	c.mu.Lock()
	ts := c.doneUntil
	c.reads[ts]++
	c.mu.Unlock()
	return c.db.NewTransactionAt(ts, update), ts
}

// end releases a read timestamp and lets Badger forget conflict state and old
// versions that no open transaction can see any more.
func (c *txnClock) end(txn *badger.Txn, readTs uint64) {
	txn.Discard()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reads[readTs]--; c.reads[readTs] <= 0 {
		delete(c.reads, readTs)
	}
	if c.readOnly {
		return
	}
	// The discard point must stay at or below every open transaction's read
	// timestamp (Badger drops conflict records and shadowed versions at or
	// below it), and never move back (Badger asserts that).
	d := c.doneUntil
	for ts := range c.reads {
		d = min(d, ts)
	}
	if d > c.discard {
		c.discard = d
		c.db.SetDiscardTs(d) // Badger takes only its own lock here; never ours
	}
}

// commit hands txn to Badger under the next timestamp and waits until its
// batch is written and, with SyncWrites, fsynced.
func (c *txnClock) commit(txn *badger.Txn) error {
	res := make(chan error, 1)
	c.commitMu.Lock()
	c.mu.Lock()
	ts := c.next
	c.next++
	c.mu.Unlock()
	// CommitAt with a callback checks conflicts and queues the write before
	// returning; the fsync wait happens in the callback. Holding commitMu over
	// that keeps timestamp order and queue order the same, as Badger's own
	// oracle does, so conflict checks see every earlier-stamped commit.
	_ = txn.CommitAt(ts, func(err error) { res <- err })
	c.commitMu.Unlock()
	err := <-res
	c.finish(ts)
	// Commits return in batch order, but their callbacks race: wait until
	// every earlier-stamped commit has returned too, so that a read right
	// after this one returns sees it (read your writes).
	c.waitDone(context.Background(), ts)
	return err
}

func (c *txnClock) finish(ts uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finished[ts] = true
	moved := false
	for c.finished[c.doneUntil+1] {
		delete(c.finished, c.doneUntil+1)
		c.doneUntil++
		moved = true
	}
	if moved {
		close(c.advanced)
		c.advanced = make(chan struct{})
	}
}

// waitIssued waits until every commit stamped so far has returned. A writer
// that lost a conflict to a commit still being fsynced calls it before
// retrying, instead of spinning until that commit is visible.
func (c *txnClock) waitIssued(ctx context.Context) error {
	c.mu.Lock()
	target := c.next - 1
	c.mu.Unlock()
	return c.waitDone(ctx, target)
}

// waitDone waits until doneUntil reaches target.
func (c *txnClock) waitDone(ctx context.Context, target uint64) error {
	for {
		c.mu.Lock()
		if c.doneUntil >= target {
			c.mu.Unlock()
			return nil
		}
		ch := c.advanced
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// view runs fn in a read-only transaction at the newest durable snapshot.
func (b *Badger) view(fn func(*badger.Txn) error) error {
	txn, ts := b.clock.begin(false)
	defer b.clock.end(txn, ts)
	return fn(txn)
}

// update runs fn in a read-write transaction and commits it durably,
// retrying on conflicts with concurrent writers (fn must be repeatable).
func (b *Badger) update(ctx context.Context, fn func(*badger.Txn) error) error {
	if b.opt.readOnly {
		return ErrReadOnly
	}
	for attempt := 0; ; attempt++ {
		txn, ts := b.clock.begin(true)
		err := fn(txn)
		if err == nil {
			err = b.clock.commit(txn)
		}
		b.clock.end(txn, ts)
		if !errors.Is(err, badger.ErrConflict) || attempt >= maxRetries {
			return err
		}
		if err := b.clock.waitIssued(ctx); err != nil {
			return err
		}
	}
}
