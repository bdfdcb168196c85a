package server

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// DefaultIdempotencyLease is how long a claim on an Idempotency-Key lasts unless its request
// renews it (Config.IdempotencyLease).
const DefaultIdempotencyLease = 5 * time.Second

// replay answers a request whose Idempotency-Key is taken: with the first response, or with the
// resource the first request created when its response was not recorded, or with a refusal.
func (s *Server) replay(c echo.Context, prior *store.IdempotencyRecord, hash string) error {
	inUse := &service.Error{Type: "idempotency_key_in_use", Message: "A request with this Idempotency-Key is still in progress."}
	inFlight := prior.Status == 0 && prior.ResourceID == nil
	switch {
	case inFlight && prior.LeaseUntil != nil && prior.LeaseUntil.After(s.now()):
		return inUse
	case prior.RequestHash != hash:
		// Another request's key, in flight or abandoned, answered or not.
		return &service.Error{Type: "idempotency_key_reused", Message: "This Idempotency-Key was used with a different request."}
	case inFlight:
		// Abandoned, and taken over by a retry since ClaimIdempotencyKey read it.
		return inUse
	case prior.Status != 0:
		c.Response().Header().Set("Idempotent-Replayed", "true")
		return c.Blob(prior.Status, prior.ContentType, prior.Body)
	}
	show, ok := created[c.Request().Method+" "+c.Path()]
	if !ok {
		// Only the operations below record what they create.
		return fmt.Errorf("idempotency key %s: %s recorded a resource it cannot show", prior.Key, c.Path())
	}
	ctx := c.Request().Context()
	out, err := show(s, ctx, principal(ctx).ProjectID, *prior.ResourceID)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Idempotent-Replayed", "true")
	return c.JSON(http.StatusCreated, out)
}

// created shows, for each operation that creates a resource, the resource a request created when
// its response was not recorded: its instance died, or the database went away, between the
// commit and the record of the response. The resource is shown as it is now, as its GET shows it.
// Operations that create nothing durable record no resource and are not here.
var created = map[string]func(s *Server, ctx context.Context, projectID, id string) (any, error){
	"POST /accounts": func(s *Server, ctx context.Context, projectID, id string) (any, error) {
		return shown(accountOut)(s.store.GetAccount(ctx, projectID, id))
	},
	"POST /accounts/:account_id/users": func(s *Server, ctx context.Context, projectID, id string) (any, error) {
		return shown(userOut)(s.store.GetUser(ctx, projectID, id))
	},
	"POST /accounts/:account_id/contacts": func(s *Server, ctx context.Context, projectID, id string) (any, error) {
		return shown(contactOut)(s.store.GetContact(ctx, projectID, id))
	},
	"POST /accounts/:account_id/messages": func(s *Server, ctx context.Context, projectID, id string) (any, error) {
		return shown(s.messageOut)(s.messages.Get(ctx, projectID, id))
	},
	"POST /accounts/:account_id/blasts": func(s *Server, ctx context.Context, projectID, id string) (any, error) {
		return shown(blastOut)(s.blasts.Get(ctx, projectID, id))
	},
	"POST /accounts/:account_id/audiences": func(s *Server, ctx context.Context, projectID, id string) (any, error) {
		return shown(audienceOut)(s.audiences.Get(ctx, projectID, id))
	},
	"POST /accounts/:account_id/phone_numbers": func(s *Server, ctx context.Context, projectID, id string) (any, error) {
		return shown(phoneNumberOut)(s.store.GetPhoneNumber(ctx, projectID, id))
	},
	"POST /accounts/:account_id/campaigns": func(s *Server, ctx context.Context, projectID, id string) (any, error) {
		return shown(campaignOut)(s.store.GetCampaign(ctx, projectID, id))
	},
	"POST /accounts/:account_id/toll_free_campaigns": func(s *Server, ctx context.Context, projectID, id string) (any, error) {
		return shown(tollFreeCampaignOut)(s.store.GetTollFreeCampaign(ctx, projectID, id))
	},
	"POST /accounts/:account_id/verifications": func(s *Server, ctx context.Context, projectID, id string) (any, error) {
		return shown(verificationOut)(s.verifications.Get(ctx, projectID, id))
	},
	"POST /verifications": func(s *Server, ctx context.Context, projectID, id string) (any, error) {
		return shown(verificationOut)(s.verifications.Get(ctx, projectID, id))
	},
}

// shown converts a resource read back with out, passing its read's error on.
func shown[T, O any](out func(T) O) func(T, error) (any, error) {
	return func(v T, err error) (any, error) {
		if err != nil {
			return nil, err
		}
		return out(v), nil
	}
}

// holdClaim renews the claim's lease every third of it while its request runs, so that a request
// that takes long keeps its key; the returned function stops renewing (and may be called again). A renewal that fails is
// logged: the lease may then lapse, after which the request can no longer create anything (its
// write finds the claim gone) and a retry runs in its place.
func (s *Server) holdClaim(ctx context.Context, claim *store.IdempotencyClaim) (stop func()) {
	done := make(chan struct{})
	var once sync.Once
	ctx = context.WithoutCancel(ctx)
	go func() {
		t := time.NewTicker(max(s.idempotencyLease/3, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			rctx, cancel := context.WithTimeout(ctx, s.idempotencyLease)
			held, err := s.store.RenewIdempotencyKey(rctx, claim, s.now().Add(s.idempotencyLease))
			cancel()
			if err != nil {
				s.log.Warn("renew the claim of an idempotency key", "key", claim.Key, "err", err)
			} else if !held {
				return
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}
