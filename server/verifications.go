package server

import (
	"context"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/store"
)

func verificationOut(v *store.Verification) gen.Verification {
	return gen.Verification{Id: v.ID, PhoneNumber: v.PhoneNumber, AttemptCount: v.AttemptCount,
		Status: gen.VerificationStatus(v.Status), CreatedAt: v.CreatedAt, ExpiresAt: v.ExpiresAt}
}

// CreateVerification sends a code to a phone number.
func (s *Server) CreateVerification(ctx context.Context, req gen.CreateVerificationRequestObject) (gen.CreateVerificationResponseObject, error) {
	v, err := s.verifications.Create(ctx, principal(ctx).ProjectID, req.AccountId, req.Body.PhoneNumber)
	if err != nil {
		return nil, err
	}
	return gen.CreateVerification201JSONResponse(verificationOut(v)), nil
}

// CreateProjectVerification sends a code to a phone number for a verification of the project,
// which belongs to no account (Surge's POST /verifications).
func (s *Server) CreateProjectVerification(ctx context.Context, req gen.CreateProjectVerificationRequestObject) (gen.CreateProjectVerificationResponseObject, error) {
	v, err := s.verifications.Create(ctx, principal(ctx).ProjectID, "", req.Body.PhoneNumber)
	if err != nil {
		return nil, err
	}
	return gen.CreateProjectVerification201JSONResponse(verificationOut(v)), nil
}

// GetVerification returns one verification.
func (s *Server) GetVerification(ctx context.Context, req gen.GetVerificationRequestObject) (gen.GetVerificationResponseObject, error) {
	v, err := s.verifications.Get(ctx, principal(ctx).ProjectID, req.Id)
	if err != nil {
		return nil, err
	}
	return gen.GetVerification200JSONResponse(verificationOut(v)), nil
}

// CheckVerification checks a code.
func (s *Server) CheckVerification(ctx context.Context, req gen.CheckVerificationRequestObject) (gen.CheckVerificationResponseObject, error) {
	result, v, err := s.verifications.Check(ctx, principal(ctx).ProjectID, req.Id, req.Body.Code)
	if err != nil {
		return nil, err
	}
	return gen.CheckVerification200JSONResponse{Result: gen.VerificationCheckResult(result), Verification: verificationOut(v)}, nil
}
