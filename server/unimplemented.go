package server

// Operations of the contract that later releases build. Each answers 501 not_implemented in the
// error envelope, never a pretend success. Implementing one means deleting its stub here.

import (
	"context"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/service"
)

// AddAudienceContact is not implemented yet.
func (s *Server) AddAudienceContact(context.Context, gen.AddAudienceContactRequestObject) (gen.AddAudienceContactResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// CancelBlast is not implemented yet.
func (s *Server) CancelBlast(context.Context, gen.CancelBlastRequestObject) (gen.CancelBlastResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// CheckVerification is not implemented yet.
func (s *Server) CheckVerification(context.Context, gen.CheckVerificationRequestObject) (gen.CheckVerificationResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// CreateAudience is not implemented yet.
func (s *Server) CreateAudience(context.Context, gen.CreateAudienceRequestObject) (gen.CreateAudienceResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// CreateBlast is not implemented yet.
func (s *Server) CreateBlast(context.Context, gen.CreateBlastRequestObject) (gen.CreateBlastResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// CreateVerification is not implemented yet.
func (s *Server) CreateVerification(context.Context, gen.CreateVerificationRequestObject) (gen.CreateVerificationResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// GetAudience is not implemented yet.
func (s *Server) GetAudience(context.Context, gen.GetAudienceRequestObject) (gen.GetAudienceResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// GetBlast is not implemented yet.
func (s *Server) GetBlast(context.Context, gen.GetBlastRequestObject) (gen.GetBlastResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// GetVerification is not implemented yet.
func (s *Server) GetVerification(context.Context, gen.GetVerificationRequestObject) (gen.GetVerificationResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// ListAudienceContacts is not implemented yet.
func (s *Server) ListAudienceContacts(context.Context, gen.ListAudienceContactsRequestObject) (gen.ListAudienceContactsResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// ListAudiences is not implemented yet.
func (s *Server) ListAudiences(context.Context, gen.ListAudiencesRequestObject) (gen.ListAudiencesResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// ListBlasts is not implemented yet.
func (s *Server) ListBlasts(context.Context, gen.ListBlastsRequestObject) (gen.ListBlastsResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// RemoveAudienceContact is not implemented yet.
func (s *Server) RemoveAudienceContact(context.Context, gen.RemoveAudienceContactRequestObject) (gen.RemoveAudienceContactResponseObject, error) {
	return nil, service.ErrNotImplemented
}
