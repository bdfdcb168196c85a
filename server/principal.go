package server

import (
	"context"

	"github.com/switchboard/switchboard/store"
)

type principalKey struct{}

func withPrincipal(ctx context.Context, p *store.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// principal returns the authenticated caller. The auth middleware guarantees one on every
// non-public operation, so handlers may rely on it.
func principal(ctx context.Context) *store.Principal {
	p, _ := ctx.Value(principalKey{}).(*store.Principal)
	if p == nil {
		return &store.Principal{}
	}
	return p
}
