package sessionmap

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
)

// A store carries an epoch: 128 random bits written once, when the store is
// created (the first bridge to open an empty Badger directory or an empty
// Redis prefix writes it; SET NX, so replicas starting together agree).
// Every bridge remembers the epoch it opened. A Redis restarted without its
// data, or a bridge pointed at another Redis, no longer holds that epoch:
// the tasks and sessions the bridge handed out are gone, and without the
// epoch nobody would notice (lookups would answer "not found", /readyz 200,
// replicas would disagree about sessions, and a replica started afterwards
// would write a new cursor secret the others do not know).
//
// Recovery is by restart, on purpose. Once a bridge sees its epoch missing
// or changed it marks the store lost for good: it logs the loss at ERROR
// once, CheckEpoch (and so /readyz) fails, and every store operation fails
// with ErrStoreLost, which faces show clients as "the bridge lost its task
// store" instead of "task not found". A restarted bridge adopts the store's
// current epoch (creating one if the store is empty) and its cursor secret.
// Adopting silently in a running bridge would hide the loss (clients would
// be told their tasks never existed) and would let a bridge pointed at the
// wrong Redis by mistake carry on writing there; an operator who restarts
// has seen the log line.

// ErrStoreLost: the store no longer holds the epoch this bridge opened (it
// was emptied, restarted without its data, or replaced). Its text is meant
// for clients; the details are in the ERROR log line.
var ErrStoreLost = errors.New("the bridge lost its task store")

// errLostForClients is what every operation returns once the store is lost.
var errLostForClients = fmt.Errorf("%w: the tasks and sessions it held were emptied or replaced, so this "+
	"task or session can no longer be found; the bridge must be restarted by its operator", ErrStoreLost)

const epochLen = 16 // 128 bits

func newEpoch() string {
	var b [epochLen]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand aborts instead)
	return hex.EncodeToString(b[:])
}

// epochGuard remembers the epoch a store opened and whether it was lost.
type epochGuard struct {
	opened string // "" for a read-only open of a store that has none yet
	where  string // the store, for the log line (no credentials)
	log    *slog.Logger

	mu   sync.Mutex
	lost error // nil, or the detailed reason (logged once)
}

// lostErr is the client-facing ErrStoreLost once the store is lost, else nil.
func (g *epochGuard) lostErr() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lost != nil {
		return errLostForClients
	}
	return nil
}

// observe compares the store's current epoch (present: the key exists)
// with the opened one; a difference marks the store lost and is logged at
// ERROR the first time. It returns the detailed ErrStoreLost, or nil.
func (g *epochGuard) observe(ctx context.Context, current string, present bool) error {
	if g.opened == "" || (present && current == g.opened) {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lost != nil {
		return g.lost
	}
	what := "no longer holds an epoch (it was emptied, or restarted without its data)"
	if present {
		what = fmt.Sprintf("holds epoch %s, not %s (another store, or one re-created)", current, g.opened)
	}
	g.lost = fmt.Errorf("%w: the %s %s; the tasks and sessions this bridge handed out are gone. "+
		"This bridge now refuses requests and /readyz fails; restart it (every bridge on this store) to "+
		"start over with the store as it is", ErrStoreLost, g.where, what)
	g.log.ErrorContext(ctx, "the task store was lost or replaced: "+g.lost.Error(),
		"store", g.where, "opened_epoch", g.opened, "current_epoch", current)
	return g.lost
}

// detail returns the detailed loss, or nil.
func (g *epochGuard) detail() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lost
}
