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

// CancelMessage is not implemented yet.
func (s *Server) CancelMessage(context.Context, gen.CancelMessageRequestObject) (gen.CancelMessageResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// CancelTollFreeCampaign is not implemented yet.
func (s *Server) CancelTollFreeCampaign(context.Context, gen.CancelTollFreeCampaignRequestObject) (gen.CancelTollFreeCampaignResponseObject, error) {
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

// CreateCampaign is not implemented yet.
func (s *Server) CreateCampaign(context.Context, gen.CreateCampaignRequestObject) (gen.CreateCampaignResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// CreateTollFreeCampaign is not implemented yet.
func (s *Server) CreateTollFreeCampaign(context.Context, gen.CreateTollFreeCampaignRequestObject) (gen.CreateTollFreeCampaignResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// CreateVerification is not implemented yet.
func (s *Server) CreateVerification(context.Context, gen.CreateVerificationRequestObject) (gen.CreateVerificationResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// DeleteRecording is not implemented yet.
func (s *Server) DeleteRecording(context.Context, gen.DeleteRecordingRequestObject) (gen.DeleteRecordingResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// FollowLink is not implemented yet.
func (s *Server) FollowLink(context.Context, gen.FollowLinkRequestObject) (gen.FollowLinkResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// GetAttachmentFile is not implemented yet.
func (s *Server) GetAttachmentFile(context.Context, gen.GetAttachmentFileRequestObject) (gen.GetAttachmentFileResponseObject, error) {
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

// GetCall is not implemented yet.
func (s *Server) GetCall(context.Context, gen.GetCallRequestObject) (gen.GetCallResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// GetCampaign is not implemented yet.
func (s *Server) GetCampaign(context.Context, gen.GetCampaignRequestObject) (gen.GetCampaignResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// GetConversation is not implemented yet.
func (s *Server) GetConversation(context.Context, gen.GetConversationRequestObject) (gen.GetConversationResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// GetMessage is not implemented yet.
func (s *Server) GetMessage(context.Context, gen.GetMessageRequestObject) (gen.GetMessageResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// GetPhoneNumber is not implemented yet.
func (s *Server) GetPhoneNumber(context.Context, gen.GetPhoneNumberRequestObject) (gen.GetPhoneNumberResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// GetRecording is not implemented yet.
func (s *Server) GetRecording(context.Context, gen.GetRecordingRequestObject) (gen.GetRecordingResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// GetRecordingFile is not implemented yet.
func (s *Server) GetRecordingFile(context.Context, gen.GetRecordingFileRequestObject) (gen.GetRecordingFileResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// GetTollFreeCampaign is not implemented yet.
func (s *Server) GetTollFreeCampaign(context.Context, gen.GetTollFreeCampaignRequestObject) (gen.GetTollFreeCampaignResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// GetVerification is not implemented yet.
func (s *Server) GetVerification(context.Context, gen.GetVerificationRequestObject) (gen.GetVerificationResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// GetVoicemail is not implemented yet.
func (s *Server) GetVoicemail(context.Context, gen.GetVoicemailRequestObject) (gen.GetVoicemailResponseObject, error) {
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

// ListAvailablePhoneNumbers is not implemented yet.
func (s *Server) ListAvailablePhoneNumbers(context.Context, gen.ListAvailablePhoneNumbersRequestObject) (gen.ListAvailablePhoneNumbersResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// ListBlasts is not implemented yet.
func (s *Server) ListBlasts(context.Context, gen.ListBlastsRequestObject) (gen.ListBlastsResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// ListCalls is not implemented yet.
func (s *Server) ListCalls(context.Context, gen.ListCallsRequestObject) (gen.ListCallsResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// ListCampaigns is not implemented yet.
func (s *Server) ListCampaigns(context.Context, gen.ListCampaignsRequestObject) (gen.ListCampaignsResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// ListConversations is not implemented yet.
func (s *Server) ListConversations(context.Context, gen.ListConversationsRequestObject) (gen.ListConversationsResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// ListMessages is not implemented yet.
func (s *Server) ListMessages(context.Context, gen.ListMessagesRequestObject) (gen.ListMessagesResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// ListPhoneNumbers is not implemented yet.
func (s *Server) ListPhoneNumbers(context.Context, gen.ListPhoneNumbersRequestObject) (gen.ListPhoneNumbersResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// ListRecordings is not implemented yet.
func (s *Server) ListRecordings(context.Context, gen.ListRecordingsRequestObject) (gen.ListRecordingsResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// ListTollFreeCampaigns is not implemented yet.
func (s *Server) ListTollFreeCampaigns(context.Context, gen.ListTollFreeCampaignsRequestObject) (gen.ListTollFreeCampaignsResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// ListVoicemails is not implemented yet.
func (s *Server) ListVoicemails(context.Context, gen.ListVoicemailsRequestObject) (gen.ListVoicemailsResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// PurchasePhoneNumber is not implemented yet.
func (s *Server) PurchasePhoneNumber(context.Context, gen.PurchasePhoneNumberRequestObject) (gen.PurchasePhoneNumberResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// ReleasePhoneNumber is not implemented yet.
func (s *Server) ReleasePhoneNumber(context.Context, gen.ReleasePhoneNumberRequestObject) (gen.ReleasePhoneNumberResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// RemoveAudienceContact is not implemented yet.
func (s *Server) RemoveAudienceContact(context.Context, gen.RemoveAudienceContactRequestObject) (gen.RemoveAudienceContactResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// SendMessage is not implemented yet.
func (s *Server) SendMessage(context.Context, gen.SendMessageRequestObject) (gen.SendMessageResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// UpdateCampaign is not implemented yet.
func (s *Server) UpdateCampaign(context.Context, gen.UpdateCampaignRequestObject) (gen.UpdateCampaignResponseObject, error) {
	return nil, service.ErrNotImplemented
}

// UpdatePhoneNumber is not implemented yet.
func (s *Server) UpdatePhoneNumber(context.Context, gen.UpdatePhoneNumberRequestObject) (gen.UpdatePhoneNumberResponseObject, error) {
	return nil, service.ErrNotImplemented
}
