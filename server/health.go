package server

import (
	"bytes"
	"context"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/service"
)

// GetHealth answers while the process serves requests.
func (s *Server) GetHealth(context.Context, gen.GetHealthRequestObject) (gen.GetHealthResponseObject, error) {
	return gen.GetHealth200JSONResponse{Status: "ok"}, nil
}

// GetReadiness answers ok when the database does; load balancers route by it.
func (s *Server) GetReadiness(ctx context.Context, _ gen.GetReadinessRequestObject) (gen.GetReadinessResponseObject, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		s.log.Warn("readiness: database unreachable", "err", err)
		return nil, service.Errorf("not_ready", "the database is unreachable")
	}
	return gen.GetReadiness200JSONResponse{Status: "ok"}, nil
}

// GetMetrics serves the Prometheus text exposition of the server's metrics.
func (s *Server) GetMetrics(context.Context, gen.GetMetricsRequestObject) (gen.GetMetricsResponseObject, error) {
	families, err := s.metrics.registry.Gather()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			return nil, err
		}
	}
	return gen.GetMetrics200TextResponse(buf.String()), nil
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
