package sessionmap

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
	bopts "github.com/dgraph-io/badger/v4/options"
)

// Key layout (all keys are prefixed by one letter and a slash):
//
//	m/format                                   store layout version ("1")
//	m/secret                                   cursor MAC secret (32 random bytes)
//	s/<session id>                             session record
//	t/<task id>                                task record
//	i/<scope hash 32><order 8><task id>        list index, newest first per owner scope
//	j/<owner hash 32><task id>                 tasks of one exact (principal, session) pair
//	x/<expiry 8><task id>                      expiry index for the GC loop
//	c/<owner digest 32>                        upstream credential record (credentials.go)
//	u/<task id>                                create intent (intent.go)
//	e/<upstream digest 32>                     the upstream's remembered era (upstream_era.go)
//
// Index keys carry the same Badger TTL as their record, so even without the
// GC loop nothing outlives its task; the loop makes removal prompt and exact
// under the injected clock (L-75).
const (
	layoutVersion = "1"
	maxRetries    = 128
	gcBatch       = 1024
	// gcBatchBytes bounds one transaction of CollectExpired or
	// DeleteSessionTasks as Badger counts it (taskDeleteCost): under the
	// 0.6 MiB it takes in one transaction with memTableSize. A batch of
	// 1,024 tasks with 24-character ids is about 240 KB; with MaxIDLen ids
	// it would be 2.2 MB, so such a batch is cut short and the rest goes in
	// the next transaction (TestBadgerDeleteLongIDs).
	gcBatchBytes = 512 << 10
)

// taskDeleteCost is what deleting a task's four keys (record, list, owner
// and expiry entries) adds to a transaction as Badger counts it: each key
// with 2 bytes of meta and 10 of version.
func taskDeleteCost(idLen int) int {
	const keys = 2 + (2 + sha256.Size + 8) + (2 + sha256.Size) + (2 + 8)
	return keys + 4*(idLen+12)
}

var (
	keyFormat = []byte("m/format")
	keySecret = []byte("m/secret")
	keyEpoch  = []byte("m/epoch") // epoch.go; written once, with the secret or by the first bridge that knows epochs
	keyPKey   = []byte("m/pkey")  // principal_key.go; written once
)

func sessionKey(id string) []byte { return append([]byte("s/"), id...) }
func taskKey(id string) []byte    { return append([]byte("t/"), id...) }

func scopePrefix(sc Scope) []byte {
	h := sha256.Sum256([]byte("tasksbridge/sessionmap/scope\x00" + sc.Key()))
	return append([]byte("i/"), h[:]...)
}

func listKey(t Task) []byte {
	o := orderKey(t.CreatedAt.UnixNano())
	return append(append(scopePrefix(t.Scope), o[:]...), t.ID...)
}

func ownerPrefix(sc Scope) []byte {
	h := sha256.Sum256([]byte("tasksbridge/sessionmap/owner\x00" + sc.Principal + "\x00" + sc.Session))
	return append([]byte("j/"), h[:]...)
}

func ownerKey(t Task) []byte { return append(ownerPrefix(t.Scope), t.ID...) }

var expiryPrefix = []byte("x/")

func expiryKey(at time.Time, id string) []byte {
	k := binary.BigEndian.AppendUint64(slices.Clone(expiryPrefix), uint64(at.UnixNano())^(1<<63))
	return append(k, id...)
}

// Memtable and value sizes. The memtable's arena is allocated whole when
// the memtable is created and stays live heap for as long as the process
// runs (about 1.3 × memTableSize: Badger adds room for one write batch and
// its skiplist nodes), and the Go collector lets the heap grow to about
// twice what is live before it collects, so each MiB here costs about two of
// resident memory. The store's records are small (a task record, its list
// and owner entries, a session, a credential: hundreds of bytes), so 4 MiB
// still holds thousands of them between flushes (10,000 parked waits on
// distinct tasks: 5.2 MiB of arena instead of 10.4 with 8 MiB, about 10 MiB
// less at the peak of their arrival, docs/PERFORMANCE.md).
//
// Badger refuses a transaction whose entries add up to 15 % of the memtable
// (0.6 MiB here) or more, counting a value stored in the value log as its
// 12-byte pointer and any other by its length. A task record and its list
// entry both carry the status message, which the upstream chooses and
// nothing bounds, and an owed answer or result can be as large as a request
// body (--max-body-bytes), so values of valueThreshold bytes or more go to
// the value log: a transaction writes at most four values (record, list,
// owner and expiry entries), each under 128 KiB in the memtable, within the
// 0.6 MiB (TestBadgerLargeRecords); the batches that only delete are bounded
// by gcBatchBytes.
//
// Neither size is written into the store: a store written with other sizes
// opens with these, and a value already in the value log, or not, is read
// wherever it is (each entry says which). The one thing an older store
// constrains is the replay of a memtable log its last process left behind
// (memTableSizeFor).
const (
	memTableSize   = 4 << 20
	valueThreshold = 128 << 10
	blockCacheSize = 4 << 20
	// legacyMemTableSize is the largest memtable the store was written
	// with before memTableSize (16 MiB, then 8 MiB): a memtable log from
	// that time may hold up to 16 MiB.
	legacyMemTableSize = 16 << 20
)

// storeOptions are the Badger options the store is written with (Verify
// reads tables with the same block size and compression).
func storeOptions(dir string) badger.Options {
	return badger.DefaultOptions(dir).
		WithMetricsEnabled(false).
		// Check each block against its checksum when it is read, and values
		// in the value log too: a damaged read is an error, not wrong data.
		WithChecksumVerificationMode(bopts.OnBlockRead).
		WithVerifyValueChecksum(true).
		// The index is small records; keep the footprint modest on shared hosts.
		WithMemTableSize(memTableSize).
		WithValueThreshold(valueThreshold).
		WithNumMemtables(2).
		// Tables are Snappy-compressed (Badger's default), so a read from a
		// table decompresses its block into Go heap, and the block cache
		// keeps such blocks live up to its size. The hot records (tasks
		// being waited on, just created) are mostly still in the memtables;
		// 4 MiB keeps the recently read blocks without letting a burst of
		// reads over many tasks (a hub's first read of each parked wait)
		// grow the live heap by up to 16 MiB, each MiB costing about two of
		// resident memory (see the memtable's note above). A miss costs one
		// block's decompression.
		WithBlockCacheSize(blockCacheSize).
		WithValueLogFileSize(64 << 20).
		WithNumCompactors(2).
		WithNumGoroutines(2)
}

// memTableSizeFor is the memtable size to open dir with. Badger replays a
// memtable log that a process left behind (it was stopped without Close:
// a crash, a kill) into a memtable of the size it is opened with, and
// exits the process when the log's records do not fit. A log written with
// memTableSize holds at most what such a memtable holds, and Badger sizes
// each new log file to twice its memtable and keeps that size until the
// log is replayed; a log of any other size (a legacyMemTableSize log,
// preallocated to 32 MiB, or one an earlier open replayed and cut to its
// end) may hold up to legacyMemTableSize of records, so the store opens
// with that size until Badger has flushed those logs (the next open after
// a clean stop is back at memTableSize).
func memTableSizeFor(dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return memTableSize // nothing to replay that can be read; Badger reports the directory
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".mem") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		if n := fi.Size(); n != 0 && n != 2*memTableSize {
			return legacyMemTableSize
		}
	}
	return memTableSize
}

// Badger is the default Store, embedded in the bridge's --data-dir. It also
// implements Admin.
type Badger struct {
	db     *badger.DB
	clock  *txnClock
	dir    string
	opt    options
	secret []byte
	pkey   []byte // principal_key.go
	epoch  *epochGuard

	mu     sync.RWMutex // read-held by every operation, write-held by Close
	closed bool

	stopGC chan struct{}
	gcDone chan struct{}
}

var (
	_ Store = (*Badger)(nil)
	_ Admin = (*Badger)(nil)
)

// OpenBadger opens (creating it if needed) the store in dir. Only one process
// may have it open read-write; ReadOnly() opens share the directory with each
// other but not with a running bridge.
func OpenBadger(dir string, opts ...Option) (*Badger, error) {
	o := buildOptions(opts)
	_, statErr := os.Stat(filepath.Join(dir, badger.ManifestFilename))
	if o.readOnly && statErr != nil {
		return nil, fmt.Errorf("sessionmap: no store in %s (is --data-dir right?): %w", dir, statErr)
	}
	// Refuse a damaged store up front, naming the file, rather than serve or
	// list from it with records silently missing.
	if statErr == nil {
		rep, err := Verify(dir)
		if err != nil {
			return nil, err
		}
		if err := rep.Err(); err != nil {
			return nil, err
		}
	}
	bo := storeOptions(dir).
		WithMemTableSize(o.memTableSize(dir)).
		// Commits are fsynced by groupSync, once per batch, before their
		// writers return (durable before the reply, L-12); Badger's SyncWrites would sync
		// once per transaction.
		WithSyncWrites(false).
		WithReadOnly(o.readOnly).
		WithLogger(badgerLogger{l: o.logger, dir: dir})
	db, err := badger.OpenManaged(bo) // timestamps come from txnClock (commit.go)
	if err != nil {
		return nil, openError(dir, o.readOnly, err)
	}
	var gs *groupSync
	if o.syncWrites && !o.readOnly {
		gs = newGroupSync(db, dir)
	}
	b := &Badger{db: db, dir: dir, opt: o, clock: newTxnClock(db, gs, o.readOnly),
		epoch: &epochGuard{where: "data directory " + dir, log: o.logger}}
	if err := b.init(); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := b.initPrincipalKey(); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := b.initEpoch(); err != nil {
		_ = db.Close()
		return nil, err
	}
	if !o.readOnly && o.gcInterval > 0 {
		b.stopGC, b.gcDone = make(chan struct{}), make(chan struct{})
		go b.gcLoop(o.gcInterval)
	}
	return b, nil
}

// openError turns Badger's open failures into messages an operator can act on.
// Badger flattens its errors to text, so the lock case is recognised by text.
func openError(dir string, readOnly bool, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Cannot acquire directory lock"):
		holder := "another process"
		if pid, rerr := os.ReadFile(filepath.Join(dir, "LOCK")); rerr == nil && len(bytes.TrimSpace(pid)) > 0 {
			holder = "process " + string(bytes.TrimSpace(pid))
		}
		if readOnly {
			return fmt.Errorf("%w: %s is held by %s, probably a running bridge; "+
				"stop it to read the store offline", ErrLocked, dir, holder)
		}
		return fmt.Errorf("%w: %s is in use by %s, probably another bridge; "+
			"stop it or use a different --data-dir", ErrLocked, dir, holder)
	case readOnly && (errors.Is(err, badger.ErrTruncateNeeded) || strings.Contains(msg, "Log truncate required")):
		return fmt.Errorf("%w: %s was not closed cleanly; start the bridge once, or rerun with --recover, "+
			"to replay its log: %v", ErrNeedsRecovery, dir, err)
	}
	return fmt.Errorf("sessionmap: open %s: %w", dir, err)
}

// init checks the layout version and loads (or creates) the cursor secret.
func (b *Badger) init() error {
	err := b.view(func(txn *badger.Txn) error {
		if v, err := getValue(txn, keyFormat); err == nil && string(v) != layoutVersion {
			return fmt.Errorf("%w: store layout %q, this bridge reads %q", ErrUnsupportedVersion, v, layoutVersion)
		} else if err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		v, err := getValue(txn, keySecret)
		if err == nil && len(v) == secretLen {
			b.secret = v
			return nil
		}
		if err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sessionmap: open %s: %w", b.dir, err)
	}
	if b.secret != nil {
		return nil
	}
	secret := make([]byte, secretLen)
	_, _ = rand.Read(secret)
	if b.opt.readOnly {
		b.secret = secret // a store that never listed has no cursors to honour
		return nil
	}
	err = b.update(context.Background(), func(txn *wtxn) error {
		if v, err := getValue(txn.Txn, keySecret); err == nil && len(v) == secretLen {
			b.secret = v
			return nil
		}
		b.secret = secret
		if err := txn.Set(keyFormat, []byte(layoutVersion)); err != nil {
			return err
		}
		return txn.Set(keySecret, secret)
	})
	if err != nil {
		return fmt.Errorf("sessionmap: initialise %s: %w", b.dir, err)
	}
	return nil
}

func getValue(txn *badger.Txn, key []byte) ([]byte, error) {
	it, err := txn.Get(key)
	if err != nil {
		return nil, err
	}
	return it.ValueCopy(nil)
}

// Dir returns the data directory.
func (b *Badger) Dir() string { return b.dir }

// Close stops the GC loop and closes the database. It is safe to call twice.
func (b *Badger) Close() error {
	if b.stopGC != nil {
		select {
		case <-b.stopGC:
		default:
			close(b.stopGC)
		}
		<-b.gcDone
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	if err := b.db.Close(); err != nil {
		return fmt.Errorf("sessionmap: close %s: %w", b.dir, err)
	}
	return nil
}

// enter guards an operation against a concurrent Close; call the returned
// func when done.
func (b *Badger) enter(ctx context.Context) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return nil, ErrClosed
	}
	if err := b.epoch.lostErr(); err != nil {
		b.mu.RUnlock()
		return nil, err
	}
	return b.mu.RUnlock, nil
}

func (b *Badger) now() time.Time { return b.opt.clock() }

// physicalExpiry converts a logical expiry (on the injected clock) into
// Badger's TTL (wall-clock Unix seconds), rounded up so the physical delete
// never precedes the logical one. Zero means no TTL.
func (b *Badger) physicalExpiry(at time.Time, now time.Time) uint64 {
	if at.IsZero() {
		return 0
	}
	wall := time.Now().Add(at.Sub(now))
	return uint64(max(wall.Unix(), 0)) + 2
}

func taskPhysicalExpiry(b *Badger, t Task, now time.Time) uint64 {
	at, ok := t.ExpiresAt()
	if !ok {
		return 0
	}
	return b.physicalExpiry(at, now)
}

func setWithExpiry(txn *wtxn, key, val []byte, exp uint64) error {
	e := badger.NewEntry(key, val)
	e.ExpiresAt = exp
	return txn.SetEntry(e)
}

// badgerRead is one store call that reads: it enters the store (closed,
// lost epoch, ended ctx) and returns what fn reads in one read transaction.
func badgerRead[T any](ctx context.Context, b *Badger, fn func(txn *badger.Txn) (T, error)) (T, error) {
	done, err := b.enter(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	defer done()
	var out T
	err = b.view(func(txn *badger.Txn) error {
		var err error
		out, err = fn(txn)
		return err
	})
	return out, err
}

// badgerWrite is badgerRead for a call that writes: fn runs in a
// read-write transaction (again on a conflict) and its last value is
// returned with the transaction's error.
func badgerWrite[T any](ctx context.Context, b *Badger, fn func(txn *wtxn) (T, error)) (T, error) {
	done, err := b.enter(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	defer done()
	var out T
	err = b.update(ctx, func(txn *wtxn) error {
		var err error
		out, err = fn(txn)
		return err
	})
	return out, err
}

// putSession writes session s with its Badger expiry.
func (b *Badger) putSession(txn *wtxn, s Session, now time.Time) error {
	val, err := encodeSession(s)
	if err != nil {
		return err
	}
	return setWithExpiry(txn, sessionKey(s.ID), val, b.physicalExpiry(s.ExpiresAt, now))
}

// --- sessions ---

func (b *Badger) CreateSession(ctx context.Context, s Session) error {
	done, err := b.enter(ctx)
	if err != nil {
		return err
	}
	defer done()
	now := b.now()
	s, err = prepareSession(s, now)
	if err != nil {
		return err
	}
	err = b.update(ctx, func(txn *wtxn) error {
		if old, err := b.loadSession(txn.Txn, s.ID); err == nil && !sessionExpired(old, now) {
			return fmt.Errorf("%w: session", ErrExists)
		} else if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrCorrupt) {
			return err
		}
		return b.putSession(txn, s, now)
	})
	if err != nil {
		return fmt.Errorf("sessionmap: create session: %w", err)
	}
	return nil
}

func (b *Badger) loadSession(txn *badger.Txn, id string) (Session, error) {
	if !validID(id) {
		return Session{}, ErrNotFound
	}
	v, err := getValue(txn, sessionKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return Session{}, ErrNotFound
	}
	if err != nil {
		return Session{}, fmt.Errorf("sessionmap: read session: %w", err)
	}
	return decodeSession("session record", v)
}

func (b *Badger) visibleSession(txn *badger.Txn, sc Scope) (Session, error) {
	s, err := b.loadSession(txn, sc.Session)
	if err != nil {
		return Session{}, err
	}
	if !sessionVisibleKeyed(b.pkey, s, sc, b.now()) {
		return Session{}, ErrNotFound
	}
	return s, nil
}

func (b *Badger) GetSession(ctx context.Context, sc Scope) (Session, error) {
	return badgerRead(ctx, b, func(txn *badger.Txn) (Session, error) {
		return b.visibleSession(txn, sc)
	})
}

func (b *Badger) TouchSession(ctx context.Context, sc Scope, logLevel *string) (Session, error) {
	return badgerWrite(ctx, b, func(txn *wtxn) (Session, error) {
		cur, err := b.visibleSession(txn.Txn, sc)
		if err != nil {
			return Session{}, err
		}
		now := b.now()
		next, changed := touchSession(cur, logLevel, now)
		if !changed {
			return next, nil
		}
		return next, b.putSession(txn, next, now)
	})
}

func (b *Badger) DeleteSession(ctx context.Context, sc Scope) error {
	done, err := b.enter(ctx)
	if err != nil {
		return err
	}
	defer done()
	return b.update(ctx, func(txn *wtxn) error {
		if _, err := b.visibleSession(txn.Txn, sc); err != nil {
			return err
		}
		return txn.Delete(sessionKey(sc.Session))
	})
}

// --- tasks ---

func (b *Badger) CreateTask(ctx context.Context, t Task) error {
	done, err := b.enter(ctx)
	if err != nil {
		return err
	}
	defer done()
	now := b.now()
	t, err = prepareTask(t, now)
	if err != nil {
		return err
	}
	val, err := encodeTask(t)
	if err != nil {
		return err
	}
	exp := taskPhysicalExpiry(b, t, now)
	err = b.update(ctx, func(txn *wtxn) error {
		if _, err := txn.Get(taskKey(t.ID)); err == nil {
			return fmt.Errorf("%w: task", ErrExists)
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		if err := setWithExpiry(txn, taskKey(t.ID), val, exp); err != nil {
			return err
		}
		if err := setWithExpiry(txn, listKey(t), encodeSummary(t), exp); err != nil {
			return err
		}
		if err := setWithExpiry(txn, ownerKey(t), nil, exp); err != nil {
			return err
		}
		if at, ok := t.ExpiresAt(); ok {
			return setWithExpiry(txn, expiryKey(at, t.ID), expiryValue(t), exp)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sessionmap: create task: %w", err)
	}
	return nil
}

// loadTask reads a task record regardless of scope, with its Badger expiry.
func (b *Badger) loadTask(txn *badger.Txn, id string) (Task, uint64, error) {
	if !validID(id) {
		return Task{}, 0, ErrNotFound
	}
	it, err := txn.Get(taskKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return Task{}, 0, ErrNotFound
	}
	if err != nil {
		return Task{}, 0, fmt.Errorf("sessionmap: read task: %w", err)
	}
	v, err := it.ValueCopy(nil)
	if err != nil {
		return Task{}, 0, fmt.Errorf("sessionmap: read task: %w", err)
	}
	t, err := decodeTask("task record", v)
	if t.ID == id {
		t.ID = id // the caller's string, not a copy of its own (decodeTask)
	}
	return t, it.ExpiresAt(), err
}

// visibleTask is the scope and expiry check (docs/ARCHITECTURE.md, A foreign
// id answers like an unknown one): anything the
// caller may not see is the bare ErrNotFound.
func (b *Badger) visibleTask(txn *badger.Txn, sc Scope, id string) (Task, uint64, error) {
	if !sc.Valid() {
		return Task{}, 0, ErrNotFound
	}
	t, exp, err := b.loadTask(txn, id)
	if err != nil {
		return Task{}, 0, err
	}
	if !ownedBy(b.pkey, sc, t.Scope) || t.Expired(b.now()) {
		return Task{}, 0, ErrNotFound
	}
	if t.Scope == sc {
		t.Scope = sc // the caller's strings (decodeTask)
	}
	return t, exp, nil
}

func (b *Badger) GetTask(ctx context.Context, sc Scope, id string) (Task, error) {
	return badgerRead(ctx, b, func(txn *badger.Txn) (Task, error) {
		t, _, err := b.visibleTask(txn, sc, id)
		return t, err
	})
}

// mutateTask loads a visible task, applies fn, and writes the result back
// (keeping its TTL) when fn reports a change.
func (b *Badger) mutateTask(ctx context.Context, sc Scope, id string,
	fn func(cur Task, now time.Time) (Task, bool, error)) (Task, error) {
	return badgerWrite(ctx, b, func(txn *wtxn) (Task, error) {
		cur, exp, err := b.visibleTask(txn.Txn, sc, id)
		if err != nil {
			return Task{}, err
		}
		next, changed, ferr := fn(cur, b.now())
		if ferr != nil || !changed {
			return next, ferr
		}
		val, err := encodeTask(next)
		if err != nil {
			return next, err
		}
		if err := setWithExpiry(txn, taskKey(id), val, exp); err != nil {
			return next, err
		}
		// Same transaction: the list never disagrees with GetTask (L-52).
		return next, setWithExpiry(txn, listKey(next), encodeSummary(next), exp)
	})
}

func (b *Badger) UpdateStatus(ctx context.Context, sc Scope, id string, snap Snapshot) (Task, error) {
	return b.mutateTask(ctx, sc, id, func(cur Task, now time.Time) (Task, bool, error) {
		return applySnapshot(cur, snap, now)
	})
}

func (b *Badger) PinCancel(ctx context.Context, sc Scope, id string) (Task, error) {
	return b.mutateTask(ctx, sc, id, func(cur Task, now time.Time) (Task, bool, error) {
		next, err := pinCancel(cur, now)
		return next, err == nil, err
	})
}

func (b *Badger) RecordAnswered(ctx context.Context, sc Scope, id string, keys []string) ([]string, error) {
	var fresh []string
	_, err := b.mutateTask(ctx, sc, id, func(cur Task, now time.Time) (Task, bool, error) {
		var next Task
		next, fresh = recordAnswered(cur, keys, now)
		return next, len(fresh) > 0, nil
	})
	if err != nil {
		return nil, err
	}
	return fresh, nil
}

func (b *Badger) OweAnswers(ctx context.Context, sc Scope, id string, answers map[string]json.RawMessage) ([]string, error) {
	var fresh []string
	_, err := b.mutateTask(ctx, sc, id, func(cur Task, now time.Time) (Task, bool, error) {
		next, f, err := oweAnswers(cur, answers, now)
		fresh = f
		return next, len(f) > 0, err
	})
	if err != nil {
		return nil, err
	}
	return fresh, nil
}

func (b *Badger) SettleAnswers(ctx context.Context, sc Scope, id string, keys []string) (Task, error) {
	return b.mutateTask(ctx, sc, id, func(cur Task, now time.Time) (Task, bool, error) {
		next, changed := settleAnswers(cur, keys, now)
		return next, changed, nil
	})
}

func (b *Badger) SettleUpstream(ctx context.Context, sc Scope, id string) (Task, error) {
	return b.mutateTask(ctx, sc, id, func(cur Task, now time.Time) (Task, bool, error) {
		next, changed := settleUpstream(cur, now)
		return next, changed, nil
	})
}

func (b *Badger) PendingUpstream(ctx context.Context) ([]Task, error) {
	return b.AllTasks(ctx, TaskFilter{OwesUpstream: true})
}

func (b *Badger) ListTasks(ctx context.Context, sc Scope, pageSize int, cursor string) (Page, error) {
	return b.listTasks(ctx, sc, pageSize, cursor, false)
}

// ListTasksFull reads the page's whole records in the same read
// transaction as its index entries.
func (b *Badger) ListTasksFull(ctx context.Context, sc Scope, pageSize int, cursor string) (Page, error) {
	return b.listTasks(ctx, sc, pageSize, cursor, true)
}

func (b *Badger) listTasks(ctx context.Context, sc Scope, pageSize int, cursor string, full bool) (Page, error) {
	if !sc.Valid() {
		return Page{}, invalid("list scope needs a principal or a session")
	}
	done, err := b.enter(ctx)
	if err != nil {
		return Page{}, err
	}
	defer done()
	prefix := scopePrefix(sc)
	start := prefix
	if cursor != "" {
		p, err := decodeCursor(b.secret, sc, cursor)
		if err != nil {
			return Page{}, err
		}
		o := orderKey(p.created)
		start = append(append(slices.Clone(prefix), o[:]...), p.id...)
	}
	n := clampPageSize(pageSize)
	now := b.now()
	page := Page{Tasks: make([]Task, 0, min(n, 128))}
	err = b.view(func(txn *badger.Txn) error {
		// Summaries are small and live in the LSM tree: read them in place.
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Seek(start); it.ValidForPrefix(prefix); it.Next() {
			item := it.Item()
			k := item.Key()
			if cursor != "" && bytes.Equal(k, start) {
				continue // the previous page's last task
			}
			var t Task
			err := item.Value(func(v []byte) error {
				var err error
				t, err = decodeSummary(string(k[len(prefix)+8:]), sc, v)
				return err
			})
			if err != nil {
				// One bad entry must not make the whole list unusable.
				b.opt.logger.Warn("sessionmap: skipping undecodable list entry", "err", err)
				continue
			}
			if t.Expired(now) {
				continue
			}
			if len(page.Tasks) == n {
				page.NextCursor = encodeCursor(b.secret, sc, posOf(page.Tasks[n-1]))
				break
			}
			page.Tasks = append(page.Tasks, t)
		}
		if !full {
			return nil
		}
		// The whole records, in the same transaction: the same snapshot
		// as the index entries, so nothing can vanish in between.
		recs := page.Tasks[:0]
		for _, s := range page.Tasks {
			t, _, err := b.visibleTask(txn, sc, s.ID)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				b.opt.logger.Warn("sessionmap: skipping unreadable task in a list", "err", err)
				continue
			}
			recs = append(recs, t)
		}
		page.Tasks = recs
		return nil
	})
	if err != nil {
		return Page{}, fmt.Errorf("sessionmap: list tasks: %w", err)
	}
	return page, nil
}

// deleteTaskTxn removes a task record and its index entries.
func deleteTaskTxn(txn *wtxn, t Task) error {
	keys := [][]byte{taskKey(t.ID), listKey(t), ownerKey(t)}
	if at, ok := t.ExpiresAt(); ok {
		keys = append(keys, expiryKey(at, t.ID))
	}
	for _, k := range keys {
		if err := txn.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

type kv struct{ key, value []byte }

// scanPrefix collects keys and values under prefix, below stop, up to limit.
func (b *Badger) scanPrefix(prefix, stop []byte, limit int) ([]kv, error) {
	var out []kv
	err := b.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			item := it.Item()
			if bytes.Compare(item.Key(), stop) >= 0 {
				break
			}
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			out = append(out, kv{item.KeyCopy(nil), v})
			if len(out) == limit {
				break
			}
		}
		return nil
	})
	return out, err
}

// collectOne removes the task behind one due expiry-index entry. The entry's
// value holds the task's list and owner keys, so the common case deletes
// without decoding the record; TTLs never change, so a due entry means an
// expired task.
func (b *Badger) collectOne(txn *wtxn, e kv, now time.Time) (bool, error) {
	id := string(e.key[len(expiryPrefix)+8:])
	if lk, ok := splitIndexKeys(e.value, id); ok {
		for _, k := range [][]byte{taskKey(id), lk[0], lk[1], e.key} {
			if err := txn.Delete(k); err != nil {
				return false, err
			}
		}
		return true, nil
	}
	// An entry without usable keys: fall back to the record.
	t, _, err := b.loadTask(txn.Txn, id)
	switch {
	case err == nil && t.Expired(now):
		return true, deleteTaskTxn(txn, t)
	case err == nil, errors.Is(err, ErrNotFound), errors.Is(err, ErrCorrupt):
		return false, txn.Delete(e.key)
	}
	return false, err
}

// expiryValue is the value of an x/ entry: the task's list key then its owner key.
func expiryValue(t Task) []byte { return append(listKey(t), ownerKey(t)...) }

func splitIndexKeys(v []byte, id string) ([2][]byte, bool) {
	const hashed = 2 + sha256.Size
	n := hashed + 8 + len(id)
	if len(v) != n+hashed+len(id) || !bytes.HasPrefix(v, []byte("i/")) || !bytes.HasPrefix(v[n:], []byte("j/")) ||
		string(v[n-len(id):n]) != id || string(v[len(v)-len(id):]) != id {
		return [2][]byte{}, false
	}
	return [2][]byte{v[:n], v[n:]}, true
}

// keysWithPrefix collects the keys under prefix (up to limit if > 0).
func (b *Badger) keysWithPrefix(prefix, start, stop []byte, limit int) ([][]byte, error) {
	var keys [][]byte
	err := b.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		if start == nil {
			start = prefix
		}
		for it.Seek(start); it.ValidForPrefix(prefix); it.Next() {
			k := it.Item().KeyCopy(nil)
			if stop != nil && bytes.Compare(k, stop) >= 0 {
				break
			}
			keys = append(keys, k)
			if limit > 0 && len(keys) == limit {
				break
			}
		}
		return nil
	})
	return keys, err
}

func (b *Badger) DeleteSessionTasks(ctx context.Context, sc Scope) (int, error) {
	if !sc.Valid() {
		return 0, invalid("delete scope needs a principal or a session")
	}
	done, err := b.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer done()
	prefix := ownerPrefix(sc)
	total := 0
	for {
		keys, err := b.keysWithPrefix(prefix, nil, nil, gcBatch)
		if err != nil || len(keys) == 0 {
			return total, err
		}
		n := 0
		err = b.update(ctx, func(txn *wtxn) error {
			n = 0
			size := 0
			for i, k := range keys {
				id := string(k[len(prefix):])
				if size += taskDeleteCost(len(id)); size > gcBatchBytes && i > 0 {
					break // the next transaction finds the rest
				}
				t, _, err := b.loadTask(txn.Txn, id)
				if err == nil && t.Scope == sc {
					if err := deleteTaskTxn(txn, t); err != nil {
						return err
					}
					n++
					continue
				}
				if err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrCorrupt) {
					return err
				}
				if err := txn.Delete(k); err != nil { // stale index entry
					return err
				}
			}
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("sessionmap: delete session tasks: %w", err)
		}
		total += n
	}
}

// --- expiry ---

// GCResult counts what CollectExpired removed.
type GCResult struct {
	Tasks    int
	Sessions int
}

// CollectExpired removes every task and session that has expired at the
// injected clock's now, including their list-index entries (L-75). The
// background loop calls it every WithGCInterval; tests call it directly.
func (b *Badger) CollectExpired(ctx context.Context) (GCResult, error) {
	var res GCResult
	done, err := b.enter(ctx)
	if err != nil {
		return res, err
	}
	defer done()
	if b.opt.readOnly {
		return res, ErrReadOnly
	}
	now := b.now()
	stop := expiryKey(now.Add(time.Nanosecond), "")
	for {
		entries, err := b.scanPrefix(expiryPrefix, stop, gcBatch)
		if err != nil {
			return res, fmt.Errorf("sessionmap: gc scan: %w", err)
		}
		if len(entries) == 0 {
			break
		}
		n, taken := 0, 0
		err = b.update(ctx, func(txn *wtxn) error {
			n, taken = 0, 0
			size := 0
			for _, e := range entries {
				if size += taskDeleteCost(len(e.key) - len(expiryPrefix) - 8); size > gcBatchBytes && taken > 0 {
					break // the next transaction finds the rest
				}
				taken++
				removed, err := b.collectOne(txn, e, now)
				if err != nil {
					return err
				}
				if removed {
					n++
				}
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("sessionmap: gc tasks: %w", err)
		}
		res.Tasks += n
		if taken == len(entries) && len(entries) < gcBatch {
			break
		}
	}
	n, err := b.collectSessions(ctx, now)
	res.Sessions = n
	return res, err
}

func (b *Badger) collectSessions(ctx context.Context, now time.Time) (int, error) {
	var expired [][]byte
	err := b.view(func(txn *badger.Txn) error {
		prefix := []byte("s/")
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.ValidForPrefix(prefix); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			if s, err := decodeSession("session record", v); err == nil && sessionExpired(s, now) {
				expired = append(expired, it.Item().KeyCopy(nil))
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sessionmap: gc sessions: %w", err)
	}
	total := 0
	for chunk := range slices.Chunk(expired, gcBatch) {
		err := b.update(ctx, func(txn *wtxn) error {
			for _, k := range chunk {
				// Re-check: the session may have been touched since the scan.
				v, err := getValue(txn.Txn, k)
				if errors.Is(err, badger.ErrKeyNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				if s, err := decodeSession("session record", v); err == nil && !sessionExpired(s, now) {
					continue
				}
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("sessionmap: gc sessions: %w", err)
		}
		total += len(chunk)
	}
	return total, nil
}

func (b *Badger) gcLoop(every time.Duration) {
	defer close(b.gcDone)
	tick := time.NewTicker(every)
	defer tick.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-b.stopGC
		cancel()
	}()
	for {
		select {
		case <-b.stopGC:
			return
		case <-tick.C:
		}
		res, err := b.CollectExpired(ctx)
		if err != nil && ctx.Err() == nil && !errors.Is(err, ErrClosed) {
			b.opt.logger.Error("sessionmap: collecting expired records failed", "dir", b.dir, "err", err)
		}
		if b.opt.gcHook != nil {
			b.opt.gcHook(res)
		}
		// Values are small and live in the LSM tree, so this rarely has work
		// (only values of valueThreshold or more go to the value log).
		err = b.db.RunValueLogGC(0.5)
		switch {
		case err == nil && b.clock.durable != nil:
			// Badger moved live entries out of a value-log file and may have
			// deleted it once they were applied, not synced: sync them at
			// once, so that window is one fsync long. The mark makes that
			// round sync the value log as well as the memtable log.
			b.clock.durable.vlogWritten()
			if err := b.clock.durable.wait(); err != nil {
				b.opt.logger.Error("sessionmap: syncing after value log GC failed", "dir", b.dir, "err", err)
			}
		case err != nil && !errors.Is(err, badger.ErrNoRewrite) && !errors.Is(err, badger.ErrRejected):
			b.opt.logger.Warn("sessionmap: value log GC failed", "dir", b.dir, "err", err)
		}
	}
}

// --- admin (operator view across scopes) ---

func (b *Badger) AllSessions(ctx context.Context) ([]Session, error) {
	out, err := badgerScan(ctx, b, "s/", "sessions", func(key, v []byte) (Session, error) {
		return decodeSession(fmt.Sprintf("session %q", key), v)
	}, func(s Session, now time.Time) bool { return !sessionExpired(s, now) })
	slices.SortFunc(out, func(a, b Session) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out, err
}

func (b *Badger) AllTasks(ctx context.Context, f TaskFilter) ([]Task, error) {
	out, err := badgerScan(ctx, b, "t/", "tasks", func(key, v []byte) (Task, error) {
		return decodeTask(fmt.Sprintf("task %q", key), v)
	}, func(t Task, now time.Time) bool { return !t.Expired(now) && f.match(t) })
	slices.SortFunc(out, newerFirst)
	return out, err
}

// badgerScan is the operator views' walk over every record under prefix in
// one read transaction: the records decode turns into values and keep
// accepts at the store's now, and every record that does not decode joined
// into the error beside them (a damaged record does not hide the others).
// A failed read of the store itself returns no records.
func badgerScan[T any](ctx context.Context, b *Badger, prefix, what string, decode func(key, v []byte) (T, error), keep func(T, time.Time) bool) ([]T, error) {
	done, err := b.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	var out []T
	var bad []error
	now := b.now()
	err = b.view(func(txn *badger.Txn) error {
		p := []byte(prefix)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p, PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.ValidForPrefix(p); it.Next() {
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			rec, err := decode(it.Item().Key()[len(p):], v)
			if err != nil {
				bad = append(bad, err)
				continue
			}
			if keep(rec, now) {
				out = append(out, rec)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sessionmap: list %s: %w", what, err)
	}
	return out, errors.Join(bad...)
}

func (b *Badger) LookupSession(ctx context.Context, id string) (Session, error) {
	return badgerRead(ctx, b, func(txn *badger.Txn) (Session, error) {
		s, err := b.loadSession(txn, id)
		if err == nil && sessionExpired(s, b.now()) {
			err = ErrNotFound
		}
		return s, err
	})
}

func (b *Badger) LookupTask(ctx context.Context, id string) (Task, error) {
	return badgerRead(ctx, b, func(txn *badger.Txn) (Task, error) {
		t, _, err := b.loadTask(txn, id)
		if err == nil && t.Expired(b.now()) {
			err = ErrNotFound
		}
		return t, err
	})
}

// badgerLogger sends Badger's log lines to slog. Its info and debug lines
// (compactions, flushes, replay) are internals, logged at debug; the
// operator's log handler keeps them out unless asked for (it knows them by
// this type). Warnings and errors say that they come from the store engine
// and name the data directory.
type badgerLogger struct {
	l   *slog.Logger
	dir string
}

func (g badgerLogger) Errorf(f string, a ...any) {
	g.l.Error("store engine error: "+badgerLine(f, a), "data_dir", g.dir)
}
func (g badgerLogger) Warningf(f string, a ...any) {
	g.l.Warn("store engine warning: "+badgerLine(f, a), "data_dir", g.dir)
}
func (g badgerLogger) Infof(f string, a ...any) {
	g.l.Debug("badger: "+badgerLine(f, a), "data_dir", g.dir)
}
func (g badgerLogger) Debugf(f string, a ...any) {
	g.l.Debug("badger: "+badgerLine(f, a), "data_dir", g.dir)
}

func badgerLine(f string, a []any) string { return strings.TrimSpace(fmt.Sprintf(f, a...)) }
