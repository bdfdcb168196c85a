package service

import (
	"context"

	"github.com/switchboard/switchboard/store"
)

// Event types of numbers and campaigns.
const (
	EventCampaignApproved            = "campaign.approved"
	EventCampaignDeactivated         = "campaign.deactivated"
	EventPhoneNumberAttachedCampaign = "phone_number.attached_to_campaign"
)

// campaignStatusData is openapi.yaml's CampaignApprovedEventData and CampaignDeactivatedEventData.
type campaignStatusData struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// numberCampaign is openapi.yaml's PhoneNumberCampaign: a number's campaign attachment.
type numberCampaign struct {
	ID               string `json:"id"`
	AttachmentStatus string `json:"attachment_status"`
}

// numberAttachedData is openapi.yaml's PhoneNumberAttachedToCampaignEventData: the number as
// conversations show it, plus its attachment and the deprecated campaign_id that mirrors it.
type numberAttachedData struct {
	eventPhoneNumber
	Campaign   *numberCampaign `json:"campaign"`
	CampaignID *string         `json:"campaign_id"`
}

func campaignApproved(c *store.Campaign) campaignStatusData {
	return campaignStatusData{ID: c.ID, Status: store.CampaignActive}
}

func numberAttached(n *store.PhoneNumber) numberAttachedData {
	md := n.Metadata
	if md == nil {
		md = store.Metadata{}
	}
	d := numberAttachedData{eventPhoneNumber: eventPhoneNumber{ID: n.ID, Metadata: md, Name: n.Name, Number: n.Number, Type: n.Type}}
	if n.CampaignID != nil && n.AttachmentStatus != nil {
		d.Campaign = &numberCampaign{ID: *n.CampaignID, AttachmentStatus: *n.AttachmentStatus}
		d.CampaignID = n.CampaignID
	}
	return d
}

// insertAttachedEvent records phone_number.attached_to_campaign for a number that has just become
// attached; call it in the transaction that attached it.
func insertAttachedEvent(ctx context.Context, tx *store.Store, n *store.PhoneNumber) error {
	_, err := tx.InsertEvent(ctx, n.ProjectID, *n.AccountID, EventPhoneNumberAttachedCampaign, numberAttached(n))
	return err
}
