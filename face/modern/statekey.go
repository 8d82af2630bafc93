package modernface

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// A requestState is sealed with an HMAC key (M-48: it is attacker input). A
// client's MRTR retry may reach another bridge process than the one that
// answered the round (a load balancer without affinity), so every process on
// the same store seals with the same key: the first one to need it records a
// random key under sessionmap.BridgePrincipal (no client can read it, as
// with the store's own cursor secret), CreateSession decides between
// processes that create it at once, and the others read it. While the store
// cannot be read the process seals with its own key; its states then only
// resume on it, and elsewhere the request starts afresh (M-48: re-ask).

var stateKeyScope = sessionmap.Scope{Principal: sessionmap.BridgePrincipal, Session: "modern-face-request-state-key"}

// stateKey returns the key requestStates are sealed with.
func (f *Face) stateKey() []byte {
	f.keyMu.Lock()
	defer f.keyMu.Unlock()
	if f.sharedKey != nil {
		return f.sharedKey
	}
	ctx, cancel := context.WithTimeout(f.ctx, readTimeout)
	defer cancel()
	key, err := f.loadStateKey(ctx)
	if err != nil {
		f.log.Warn("modern face: cannot read the shared requestState key from the store; MRTR retries resume only on this bridge process until it can",
			"err", err)
		return f.sealKey
	}
	f.sharedKey = key
	return key
}

func (f *Face) loadStateKey(ctx context.Context) ([]byte, error) {
	for range 2 {
		s, err := f.store.GetSession(ctx, stateKeyScope)
		if err == nil {
			var rec struct {
				Key string `json:"key"`
			}
			if json.Unmarshal(s.InitializeParams, &rec) == nil {
				if key, err := base64.RawStdEncoding.DecodeString(rec.Key); err == nil && len(key) == 32 {
					return key, nil
				}
			}
			return nil, errors.New("the stored requestState key is unreadable")
		}
		if !errors.Is(err, sessionmap.ErrNotFound) {
			return nil, err
		}
		key := randomKey()
		body, err := json.Marshal(map[string]string{"key": base64.RawStdEncoding.EncodeToString(key),
			"note": "HMAC key of the modern face's MRTR requestState, shared by the bridge processes on this store"})
		if err != nil {
			return nil, err
		}
		err = f.store.CreateSession(ctx, sessionmap.Session{ID: stateKeyScope.Session, Principal: stateKeyScope.Principal,
			Era: era.Modern, InitializeParams: body})
		if err == nil {
			return key, nil
		}
		if !errors.Is(err, sessionmap.ErrExists) {
			return nil, err
		}
		// Another process recorded one first: read it.
	}
	return nil, fmt.Errorf("the requestState key record keeps changing")
}
