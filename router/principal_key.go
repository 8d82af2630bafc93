package router

import (
	"github.com/tasksbridge/tasksbridge/internal/identity"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// keyedResolver keys every principal res resolves with the store's
// principal key (sessionmap/principal_key.go), so the principals in the
// store, the audit log and the logs are HMACs under a per-deployment
// secret that every replica sharing the store shares. A store without a
// key (a test fake) leaves res as it is.
func keyedResolver(res identity.Resolver, st sessionmap.Store) identity.Resolver {
	k, ok := st.(sessionmap.PrincipalKeyer)
	if !ok {
		return res
	}
	if res == nil && len(k.PrincipalKey()) == 0 {
		return nil
	}
	return identity.Keyed(res, k.PrincipalKey())
}
