package router

import (
	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/edge"
)

// Live is the part of Config that may change while the server runs (bridge
// serve re-reads its config file on SIGHUP): the edge's Host, Origin
// (M-43) and trusted-proxy policies and body bound, and the legacy face's
// session bound, each source's share of it and per-principal limits
// (L-72, L-73). Zero limits mean the
// defaults, negative ones no bound, as in Config and legacyface.Config.
type Live struct {
	AllowedHosts   []string
	AllowedOrigins []string
	TrustedProxies []string
	MaxBodyBytes   int64

	MaxSessions             int
	MaxSessionsPerPrincipal int
	MaxTasksPerPrincipal    int
	MaxWaitersPerPrincipal  int
}

// Reconfigure applies l to the running server: the next request is served
// under it, requests in flight finish under what admitted them. Nothing is
// changed when any value is refused (the same checks as New).
func (s *Server) Reconfigure(l Live) error {
	hosts, err := edge.ParseHosts(l.AllowedHosts)
	if err != nil {
		return err
	}
	origins, err := edge.ParseOrigins(l.AllowedOrigins)
	if err != nil {
		return err
	}
	proxies, err := edge.ParseTrustedProxies(l.TrustedProxies)
	if err != nil {
		return err
	}
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = legacyface.DefaultMaxBodyBytes
	}
	s.edge.Reconfigure(edge.Live{Policy: edge.Policy{AllowedHosts: hosts, AllowedOrigins: origins}, TrustedProxies: proxies, MaxBodyBytes: l.MaxBodyBytes})
	if s.legacy != nil {
		s.legacy.SetLimits(legacyface.Limits{MaxSessions: l.MaxSessions, MaxSessionsPerPrincipal: l.MaxSessionsPerPrincipal, MaxTasksPerPrincipal: l.MaxTasksPerPrincipal, MaxWaitersPerPrincipal: l.MaxWaitersPerPrincipal})
	}
	return nil
}
