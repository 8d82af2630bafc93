package router

import (
	"context"
	"log/slog"

	"github.com/tasksbridge/tasksbridge/runtime/upcred"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// newKeeper is the keeper of the principals' freshest upstream
// credentials that both faces share (runtime/upcred): sealed in the store
// with Config.CredentialKey when the store can keep them, announced to the
// replicas over Config.Coord; otherwise in this process's memory only,
// which one INFO line says, with what it costs.
func newKeeper(cfg Config, st sessionmap.Store, target string, log *slog.Logger) *upcred.Keeper {
	kc := upcred.Config{Upstream: target, Logger: log}
	cs, storable := st.(sessionmap.CredentialStore)
	switch {
	case cfg.CredentialKey == nil:
		log.Info("no credential key (--credential-key-file or TASKSBRIDGE_CREDENTIAL_KEY): clients' upstream credentials are kept in this process's memory only; after a restart, and on other replicas, a task whose client's token was refreshed waits for that client's next request")
	case !storable:
		log.Info("the store cannot keep upstream credentials: they are kept in this process's memory only; after a restart, and on other replicas, a task whose client's token was refreshed waits for that client's next request")
	default:
		kc.Store, kc.Sealer = cs, cfg.CredentialKey
		if cfg.Coord != nil {
			kc.Fanout = cfg.Coord
		}
	}
	k := upcred.New(kc)
	if err := k.Start(context.Background()); err != nil {
		log.Warn("cannot hear other replicas' credential refreshes; they are found when needed, within seconds", "err", err)
	}
	return k
}

// Credentials is the keeper both faces share: the request edge may hand it
// a request's credential with the expiry the identity resolver verified
// (Observe), before the faces see the request.
func (s *Server) Credentials() *upcred.Keeper { return s.creds }
