package server

import (
	"context"
	"encoding/json"
	"time"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

func accountOut(a *store.Account) gen.Account {
	var org gen.Organization
	_ = json.Unmarshal([]byte(a.Organization), &org) // written by us from the same schema
	brand := a.BrandName
	if brand == nil {
		brand = &a.Name
	}
	return gen.Account{Id: a.ID, Name: a.Name, BrandName: brand, Organization: org, TimeZone: a.TimeZone,
		QuietHours: gen.QuietHours{Enabled: a.QuietHours, Start: service.FormatClock(a.QuietHoursStart), End: service.FormatClock(a.QuietHoursEnd)}}
}

// quietHoursChange is the quiet_hours of a create or update body as a change.
func quietHoursChange(p *gen.QuietHoursParams) service.QuietHoursChange {
	if p == nil {
		return service.QuietHoursChange{}
	}
	return service.QuietHoursChange{Enabled: p.Enabled, Start: p.Start, End: p.End}
}

func checkTimeZone(tz *string) error {
	if tz == nil {
		return nil
	}
	if _, err := time.LoadLocation(*tz); err != nil || *tz == "" || *tz == "Local" {
		return service.Invalid("time_zone", "is not an IANA time zone name")
	}
	return nil
}

// CreateAccount creates an account in the caller's project.
func (s *Server) CreateAccount(ctx context.Context, req gen.CreateAccountRequestObject) (gen.CreateAccountResponseObject, error) {
	b := req.Body
	if err := checkTimeZone(b.TimeZone); err != nil {
		return nil, err
	}
	org := "{}"
	if b.Organization != nil {
		var err error
		if org, err = mergeJSON("{}", b.Organization); err != nil {
			return nil, err
		}
	}
	a := &store.Account{ProjectID: principal(ctx).ProjectID, Name: b.Name, BrandName: b.BrandName, Organization: org, TimeZone: b.TimeZone}
	if err := quietHoursChange(b.QuietHours).Apply(a); err != nil {
		return nil, err
	}
	if err := s.store.CreateAccount(ctx, a); err != nil {
		return nil, err
	}
	return gen.CreateAccount201JSONResponse(accountOut(a)), nil
}

// ListAccounts lists the caller's accounts, newest first.
func (s *Server) ListAccounts(ctx context.Context, req gen.ListAccountsRequestObject) (gen.ListAccountsResponseObject, error) {
	p := req.Params
	rows, cur, err := s.store.ListAccounts(ctx, principal(ctx).ProjectID, page(p.After, p.Before, p.Limit))
	if err != nil {
		return nil, err
	}
	return gen.ListAccounts200JSONResponse{Data: mapSlice(rows, accountOut), Pagination: pagination(cur)}, nil
}

// GetAccount returns one of the caller's accounts.
func (s *Server) GetAccount(ctx context.Context, req gen.GetAccountRequestObject) (gen.GetAccountResponseObject, error) {
	a, err := s.accounts.GetAccount(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return accountAnswer(accountOut(a)), nil
}

// UpdateAccount changes the fields present in the body; an archived account cannot change.
func (s *Server) UpdateAccount(ctx context.Context, req gen.UpdateAccountRequestObject) (gen.UpdateAccountResponseObject, error) {
	b := req.Body
	if b == nil {
		b = &gen.AccountUpdateParams{} // the SDKs' update(id) sends no body: nothing changes
	}
	patch := store.AccountPatch{Name: b.Name, SetBrandName: b.BrandName.IsSpecified(), SetTimeZone: b.TimeZone.IsSpecified()}
	if b.BrandName.IsSpecified() && !b.BrandName.IsNull() {
		brand := b.BrandName.MustGet()
		patch.BrandName = &brand
	}
	if b.TimeZone.IsSpecified() && !b.TimeZone.IsNull() {
		tz := b.TimeZone.MustGet()
		if err := checkTimeZone(&tz); err != nil {
			return nil, err
		}
		patch.TimeZone = &tz
	}
	a, err := s.store.UpdateAccount(ctx, principal(ctx).ProjectID, req.Id, patch, func(a *store.Account) error {
		if err := service.Changeable(a); err != nil {
			return err
		}
		if err := quietHoursChange(b.QuietHours).Apply(a); err != nil {
			return err
		}
		if b.Organization != nil {
			org, err := mergeJSON(a.Organization, b.Organization)
			if err != nil {
				return err
			}
			a.Organization = org
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return gen.UpdateAccount200JSONResponse(accountOut(a)), nil
}

// ArchiveAccount archives an account: it can no longer send, its numbers are released and its
// campaigns ended, and it cannot be restored.
func (s *Server) ArchiveAccount(ctx context.Context, req gen.ArchiveAccountRequestObject) (gen.ArchiveAccountResponseObject, error) {
	a, err := s.numbers.ArchiveAccount(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.ArchiveAccount200JSONResponse(accountOut(a)), nil
}

// GetAccountStatus reports whether the account can use each capability and what it lacks.
func (s *Server) GetAccountStatus(ctx context.Context, req gen.GetAccountStatusRequestObject) (gen.GetAccountStatusResponseObject, error) {
	st, err := s.numbers.AccountStatus(ctx, principal(ctx).ProjectID, req.AccountId)
	if err != nil {
		return nil, err
	}
	errs := make([]gen.AccountStatusError, 0, len(st.Errors))
	for _, e := range st.Errors {
		errs = append(errs, gen.AccountStatusError{Field: e.Field, Message: e.Message, Type: e.Type})
	}
	return gen.GetAccountStatus200JSONResponse{Capabilities: gen.AccountStatusCapabilities{
		LocalMessaging: gen.AccountStatusCapability{
			Status: gen.CapabilityStatus(st.Status), FieldsNeeded: st.FieldsNeeded, Errors: errs,
		},
	}}, nil
}
