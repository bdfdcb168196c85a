package server

import (
	"context"
	"fmt"
	"time"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/service"
)

// GetHealth answers while the process serves requests.
func (s *Server) GetHealth(context.Context, gen.GetHealthRequestObject) (gen.GetHealthResponseObject, error) {
	return gen.GetHealth200JSONResponse{Status: "ok"}, nil
}

// GetReadiness answers ok when the database answers and has every migration of this release;
// load balancers route by it. It also reports each carrier adapter's state, which does not make
// the instance unready: messages wait in the queue until a carrier is back.
func (s *Server) GetReadiness(ctx context.Context, _ gen.GetReadinessRequestObject) (gen.GetReadinessResponseObject, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		s.log.Warn("readiness: database unreachable", "err", err)
		return nil, &service.Error{Type: "not_ready", Message: "the database is unreachable", Detail: map[string]any{"database": "unreachable"}}
	}
	ms, err := s.store.MigrationStatus(ctx)
	if err != nil {
		return nil, err
	}
	out := gen.GetReadiness200JSONResponse{Status: gen.ReadinessStatusOk}
	out.Checks.Database = gen.ReadinessChecksDatabaseOk
	out.Checks.Migrations = gen.Current
	pending := 0
	for _, m := range ms {
		switch {
		case m.AppliedAt == nil:
			pending++
		case m.Unknown:
			out.Checks.Migrations = gen.Ahead
		}
	}
	if pending > 0 {
		return nil, &service.Error{Type: "not_ready", Message: fmt.Sprintf("%d migrations are pending: run 'switchboard migrate'", pending),
			Detail: map[string]any{"migrations": fmt.Sprintf("%d pending", pending)}}
	}
	out.Checks.Carriers = map[string]gen.ReadinessChecksCarriers{}
	for _, c := range s.carriers.All() {
		state := gen.ReadinessChecksCarriersReady
		if b, ok := c.(interface{ Bound() bool }); ok {
			state = gen.ReadinessChecksCarriersUnbound
			if b.Bound() {
				state = gen.ReadinessChecksCarriersBound
			}
		}
		out.Checks.Carriers[c.Name()] = state
	}
	return out, nil
}

// GetJwks publishes the public keys that verify user tokens.
func (s *Server) GetJwks(ctx context.Context, _ gen.GetJwksRequestObject) (gen.GetJwksResponseObject, error) {
	keys, err := s.tokens.PublicKeys(ctx)
	if err != nil {
		return nil, err
	}
	out := gen.GetJwks200JSONResponse{Keys: make([]gen.Jwk, 0, len(keys))}
	for _, k := range keys {
		out.Keys = append(out.Keys, gen.Jwk{Kty: gen.JwkKty(k.Kty), Crv: gen.JwkCrv(k.Crv), X: k.X, Kid: k.Kid, Alg: gen.JwkAlg(k.Alg), Use: gen.JwkUse(k.Use)})
	}
	return out, nil
}
