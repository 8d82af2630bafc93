package sessionmap

import (
	"context"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// initEpoch loads the store's epoch, writing one first when it has none (a
// new store, or one written before epochs existed). A read-only open of a
// store without one writes nothing and checks nothing.
func (b *Badger) initEpoch() error {
	read := func() error {
		return b.view(func(txn *badger.Txn) error {
			v, err := getValue(txn, keyEpoch)
			if err == nil {
				b.epoch.opened = string(v)
			}
			if errors.Is(err, badger.ErrKeyNotFound) {
				return nil
			}
			return err
		})
	}
	if err := read(); err != nil {
		return fmt.Errorf("sessionmap: open %s: %w", b.dir, err)
	}
	if b.epoch.opened != "" || b.opt.readOnly {
		return nil
	}
	ep := newEpoch()
	err := b.update(context.Background(), func(txn *wtxn) error {
		if v, err := getValue(txn.Txn, keyEpoch); err == nil {
			ep = string(v)
			return nil
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		return txn.Set(keyEpoch, []byte(ep))
	})
	if err != nil {
		return fmt.Errorf("sessionmap: initialise %s: %w", b.dir, err)
	}
	b.epoch.opened = ep
	return nil
}

// CheckEpoch reads the epoch from the store. The bridge holds the data
// directory's lock, so no other bridge can empty it under a running one;
// the check is here so that every store answers readiness the same way.
func (b *Badger) CheckEpoch(ctx context.Context) error {
	if err := b.epoch.detail(); err != nil {
		return err
	}
	done, err := b.enter(ctx)
	if err != nil {
		return err
	}
	defer done()
	var cur string
	present := true
	err = b.view(func(txn *badger.Txn) error {
		v, err := getValue(txn, keyEpoch)
		if errors.Is(err, badger.ErrKeyNotFound) {
			present = false
			return nil
		}
		cur = string(v)
		return err
	})
	if err != nil {
		return fmt.Errorf("sessionmap: read the epoch of %s: %w", b.dir, err)
	}
	return b.epoch.observe(ctx, cur, present)
}

// initPrincipalKey loads the store's principal key (principal_key.go),
// writing one first when it has none. A read-only open of a store without
// one has none: nothing in it is keyed.
func (b *Badger) initPrincipalKey() error {
	err := b.view(func(txn *badger.Txn) error {
		v, err := getValue(txn, keyPKey)
		if err == nil && len(v) == principalKeyLen {
			b.pkey = v
			return nil
		}
		if err == nil {
			return fmt.Errorf("%w: principal key", ErrCorrupt)
		}
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("sessionmap: open %s: %w", b.dir, err)
	}
	if b.pkey != nil || b.opt.readOnly {
		return nil
	}
	k := newPrincipalKey()
	err = b.update(context.Background(), func(txn *wtxn) error {
		if v, err := getValue(txn.Txn, keyPKey); err == nil && len(v) == principalKeyLen {
			k = v
			return nil
		} else if err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		return txn.Set(keyPKey, k)
	})
	if err != nil {
		return fmt.Errorf("sessionmap: initialise %s: %w", b.dir, err)
	}
	b.pkey = k
	return nil
}

// PrincipalKey returns the store's principal key (principal_key.go).
func (b *Badger) PrincipalKey() []byte { return b.pkey }
