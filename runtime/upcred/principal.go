package upcred

import (
	"context"

	"github.com/tasksbridge/tasksbridge/internal/identity"
)

type principalKey struct{}

// WithPrincipal returns ctx carrying the principal a request acts for, as
// resolved before the faces see the request (the request edge, or a test
// resolver). The faces' principalOf takes it instead of hashing the
// Authorization header, so a principal that survives token refresh (jwt
// mode: iss and sub) keeps its sessions and tasks across tokens.
func WithPrincipal(ctx context.Context, p identity.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalOf returns the principal WithPrincipal put into ctx.
func PrincipalOf(ctx context.Context) (identity.Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(identity.Principal)
	return p, ok
}
