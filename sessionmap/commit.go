package sessionmap

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
)

// Group commit without read stalls.
//
// Badger's own transaction timestamps make every new transaction, read or
// write, wait until all commits already handed a timestamp are applied, and
// with SyncWrites that includes their fsync; its SyncWrites also syncs the log
// once per transaction, not once per batch. Reads then queue behind a
// writer's fsync, and concurrent writers each pay for their own.
//
// The store therefore runs Badger in managed mode without SyncWrites and
// does both jobs itself. txnClock hands out timestamps; a transaction reads at
// the newest timestamp below which every commit is durable, so readers never
// wait and never see a write that a crash could still take back (L-12;
// docs/ARCHITECTURE.md, No handle before it is durable; and no status a client saw
// can move back after a restart). groupSync makes commits durable: a writer whose commit Badger
// has applied waits for one fsync that started after that, and whoever finds
// none running starts it for everyone waiting. One fsync thus covers every
// commit applied while the previous one ran, and each writer returns only
// once its own data is on disk.

// txnClock is the timestamp oracle of a managed-mode Badger.
type txnClock struct {
	db      *badger.DB
	durable *groupSync // nil: commits are not fsynced (WithSyncWrites(false), benchmarks only)

	commitMu sync.Mutex // orders timestamp assignment with the hand-off to Badger's write channel

	mu        sync.Mutex
	next      uint64          // next commit timestamp
	visible   uint64          // transactions read here: every commit at or below it is durable or failed
	doneUntil uint64          // every commit at or below it has returned (durable or failed)
	finished  map[uint64]bool // returned commits above doneUntil (they finish out of order)
	advanced  chan struct{}   // closed and replaced whenever doneUntil moves
	reads     map[uint64]int  // read timestamps of open transactions, with counts
	discard   uint64          // last value passed to SetDiscardTs
	readOnly  bool
}

func newTxnClock(db *badger.DB, gs *groupSync, readOnly bool) *txnClock {
	last := db.MaxVersion()
	return &txnClock{db: db, durable: gs, next: last + 1, visible: last, doneUntil: last, readOnly: readOnly,
		finished: map[uint64]bool{}, advanced: make(chan struct{}), reads: map[uint64]int{}}
}

// begin opens a transaction reading at the newest durable snapshot. Call
// end with the returned timestamp when done with it.
func (c *txnClock) begin(update bool) (*badger.Txn, uint64) {
	c.mu.Lock()
	ts := c.visible
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
	d := c.visible
	for ts := range c.reads {
		d = min(d, ts)
	}
	if d > c.discard {
		c.discard = d
		c.db.SetDiscardTs(d) // Badger takes only its own lock here; never ours
	}
}

// commit hands txn to Badger under the next timestamp and waits until it is
// applied and fsynced. toVlog says the transaction holds a value Badger
// writes to the value log instead of the memtable log.
func (c *txnClock) commit(txn *badger.Txn, toVlog bool) error {
	if toVlog && c.durable != nil {
		// Before the hand-off: any round that covers this commit starts after
		// it was applied, so it sees the mark (see groupSync.syncAll).
		c.durable.vlogWritten()
	}
	res := make(chan error, 1)
	c.commitMu.Lock()
	c.mu.Lock()
	ts := c.next
	c.next++
	c.mu.Unlock()
	// CommitAt with a callback checks conflicts and queues the write before
	// returning; the callback runs once Badger has applied it. Holding commitMu over
	// that keeps timestamp order and queue order the same, as Badger's own
	// oracle does, so conflict checks see every earlier-stamped commit.
	_ = txn.CommitAt(ts, func(err error) { res <- err })
	c.commitMu.Unlock()
	err := <-res
	if err == nil && c.durable != nil && !c.visibleAt(ts) {
		err = c.durable.wait()
	}
	c.finish(ts, err == nil)
	return err
}

// visibleAt reports whether reads already run at or above ts: a later
// commit's fsync round has covered this one (see finish).
func (c *txnClock) visibleAt(ts uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.visible >= ts
}

// finish records that commit ts has returned, durable if ok.
//
// Badger applies commits in queue order, which commitMu makes timestamp
// order, and the fsync round a commit waited for started after it was
// applied. So once commit ts is durable, every earlier-stamped commit is
// either durable too or failed without writing, whether or not its own
// goroutine has got that far: reads may move to ts at once. Waiting for those
// goroutines instead would make one descheduled writer delay everyone's
// acknowledgement. A failed commit proves nothing about earlier ones, so only
// the contiguous doneUntil moves past it.
func (c *txnClock) finish(ts uint64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finished[ts] = true
	moved := false
	for c.finished[c.doneUntil+1] {
		delete(c.finished, c.doneUntil+1)
		c.doneUntil++
		moved = true
	}
	if ok {
		c.visible = max(c.visible, ts)
	}
	c.visible = max(c.visible, c.doneUntil)
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

// wtxn is a read-write transaction that remembers whether it wrote: one
// that did not (an unchanged poll, a touch within the granularity) has
// nothing to make durable and must not cost an fsync round. It also
// remembers whether a value is large enough for Badger to put it in the
// value log (len >= ValueThreshold, the rule Badger applies per entry), so
// rounds fsync that file only when it may hold something new.
type wtxn struct {
	*badger.Txn
	vlogFrom int // Badger's ValueThreshold
	wrote    bool
	toVlog   bool
}

func (w *wtxn) Set(key, val []byte) error {
	w.wrote = true
	w.toVlog = w.toVlog || len(val) >= w.vlogFrom
	return w.Txn.Set(key, val)
}

func (w *wtxn) SetEntry(e *badger.Entry) error {
	w.wrote = true
	w.toVlog = w.toVlog || len(e.Value) >= w.vlogFrom
	return w.Txn.SetEntry(e)
}

func (w *wtxn) Delete(key []byte) error {
	w.wrote = true
	return w.Txn.Delete(key)
}

// update runs fn in a read-write transaction and commits it durably,
// retrying on conflicts with concurrent writers (fn must be repeatable).
func (b *Badger) update(ctx context.Context, fn func(*wtxn) error) error {
	if b.opt.readOnly {
		return ErrReadOnly
	}
	for attempt := 0; ; attempt++ {
		txn, ts := b.clock.begin(true)
		w := &wtxn{Txn: txn, vlogFrom: int(b.db.Opts().ValueThreshold)}
		err := fn(w)
		if err == nil && w.wrote {
			err = b.clock.commit(txn, w.toVlog)
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

// groupSync makes applied commits durable with as few fsyncs as possible.
type groupSync struct {
	db  *badger.DB
	dir string

	mu        sync.Mutex
	cond      *sync.Cond
	started   uint64 // fsync rounds started
	completed uint64 // rounds finished (they run one at a time)
	running   bool
	err       error       // sticky: after a failed fsync nothing is acknowledged any more
	logs      [2]logFiles // memtable and value log files; only the running round touches them

	// Value-log writes: vlogMarks counts commits (and value-log GC runs) that
	// may have written to the value log; vlogSynced is the count the last
	// round that fsynced it saw (only the running round touches it).
	// vlogAlways: Badger moves its threshold by itself (VLogPercentile), so
	// wtxn cannot tell.
	vlogMarks  atomic.Uint64
	vlogSynced uint64
	vlogAlways bool
	// walByPath: fsync the memtable log through its path rather than
	// Badger's msync of the whole mapping with the value log after it. On
	// Linux both write back the same page cache (msync(MS_SYNC) is an fsync
	// of the file's range); elsewhere Badger's Sync is used as is.
	walByPath bool

	testWaiting func() // tests: a commit is about to wait for a round
	testRound   func() // tests: a round starts (before it syncs)
}

func newGroupSync(db *badger.DB, dir string) *groupSync {
	g := &groupSync{db: db, dir: dir, logs: [2]logFiles{
		{ext: ".mem", format: "%05d.mem", active: -1},
		{ext: ".vlog", format: "%06d.vlog", active: -1},
	}, vlogAlways: db.Opts().VLogPercentile > 0, walByPath: runtime.GOOS == "linux"}
	// Whatever the value log held at open was written by an earlier process
	// that may not have synced it: the first round syncs it.
	g.vlogMarks.Store(1)
	g.cond = sync.NewCond(&g.mu)
	return g
}

// wait returns once an fsync round that started after the call has finished.
func (g *groupSync) wait() error {
	if g.testWaiting != nil {
		g.testWaiting()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	// A round already running may have started before our data was applied.
	need := g.started + 1
	for g.completed < need && g.err == nil {
		if g.running {
			g.cond.Wait()
			continue
		}
		g.running = true
		g.started++
		round := g.started
		g.mu.Unlock()
		if g.testRound != nil {
			g.testRound()
		}
		err := g.syncAll()
		g.mu.Lock()
		g.running = false
		g.completed = round
		if err != nil {
			// After a failed fsync the kernel may have dropped the dirty
			// pages: nothing written since can be called durable.
			g.err = fmt.Errorf("sessionmap: writing %s to disk failed, so nothing more is accepted; "+
				"check the disk, then restart the bridge: %w", g.dir, err)
		}
		g.cond.Broadcast()
	}
	return g.err
}

// vlogWritten marks that a commit about to be handed to Badger, or a value
// log GC that has run, may have written to the value log.
func (g *groupSync) vlogWritten() { g.vlogMarks.Add(1) }

// syncAll fsyncs everything a commit applied since the last round may be in.
// Badger's Sync covers the active memtable log and the active value log. When
// either filled up meanwhile, Badger (without SyncWrites) moved on to a new
// file without syncing the old one, so the files that were active since the
// last round are synced too, and the directory, which holds a new file then.
//
// Values below ValueThreshold, all the store writes in practice, live in
// the memtable log only, and a value-log fsync that has nothing to write
// still costs a device flush. So the value log is synced only when a commit
// marked it (commit, before the hand-off; the GC loop, after a value-log GC)
// since the last round that synced it: a commit this round covers was applied
// before the round started, so its mark is seen here. Otherwise only the
// memtable log is synced, and the value log's rotated files are left alone
// too (nothing was written, so nothing rotated).
func (g *groupSync) syncAll() error {
	marks := g.vlogMarks.Load()
	vlog := g.vlogAlways || marks != g.vlogSynced || !g.walByPath
	if vlog {
		if err := g.db.Sync(); err != nil {
			return err
		}
	}
	moved := false
	for i := range g.logs {
		if i == 1 && !vlog {
			continue
		}
		m, err := g.logs[i].syncRotated(g.dir, i == 0 && !vlog)
		if err != nil {
			return err
		}
		moved = moved || m
	}
	if vlog {
		g.vlogSynced = marks
	}
	if moved {
		return fsyncPath(g.dir)
	}
	return nil
}

// logFiles follows one kind of Badger log file: memtable logs ("%05d.mem")
// or value logs ("%06d.vlog"), numbered in sequence.
type logFiles struct {
	ext, format string
	active      int64 // newest file seen by a round (-1: none yet)
}

// syncRotated fsyncs the files that were active since the last round but
// are not the newest, and the newest too when newest is set (otherwise
// Badger's Sync did it), and reports whether a new file appeared. While the
// file after the active one does not exist nothing rotated: one stat per
// round instead of reading the directory.
func (l *logFiles) syncRotated(dir string, newest bool) (bool, error) {
	if l.active >= 0 {
		_, err := os.Stat(filepath.Join(dir, fmt.Sprintf(l.format, l.active+1)))
		if errors.Is(err, os.ErrNotExist) {
			if !newest {
				return false, nil
			}
			return false, syncLog(filepath.Join(dir, fmt.Sprintf(l.format, l.active)))
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	var ids []int64
	for _, e := range ents {
		if id, ok := strings.CutSuffix(e.Name(), l.ext); ok {
			if n, err := strconv.ParseInt(id, 10, 64); err == nil {
				ids = append(ids, n)
			}
		}
	}
	if len(ids) == 0 {
		return false, nil
	}
	last := slices.Max(ids)
	for _, n := range ids {
		// The newest, unless asked for: db.Sync did it, or it is newer than
		// this round's data. Below the last active one: synced by an earlier
		// round.
		if (n == last && !newest) || n < l.active {
			continue
		}
		if err := syncLog(filepath.Join(dir, fmt.Sprintf(l.format, n))); err != nil {
			return false, err
		}
	}
	moved := last != l.active
	l.active = last
	return moved, nil
}

// syncLog fsyncs a log file that Badger may have deleted meanwhile: a
// memtable log that vanished was flushed to a synced table file first.
func syncLog(path string) error {
	if err := fsyncPath(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func fsyncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
