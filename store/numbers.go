package store

import (
	"context"
	"time"
)

// TypeID prefixes of numbers and campaigns.
const (
	PrefixPhoneNumber      = "pn"
	PrefixCampaign         = "cpn"
	PrefixTollFreeCampaign = "tfc"
)

// Phone number types.
const (
	NumberLocal     = "local"
	NumberTollFree  = "toll_free"
	NumberShortCode = "short_code"
	NumberDemo      = "demo"
)

// Campaign statuses (10DLC and toll-free).
const (
	CampaignCreated     = "created"
	CampaignInReview    = "in_review"
	CampaignActive      = "active"
	CampaignRejected    = "rejected"
	CampaignDeactivated = "deactivated"
	CampaignCanceled    = "canceled"
)

// Attachment statuses of a number's campaign.
const (
	AttachmentPending = "attachment_pending"
	AttachmentDone    = "attached"
)

// PhoneNumber is a number held by the installation: an account's purchased number, or the shared
// demo number (ProjectID and AccountID empty).
type PhoneNumber struct {
	ID        string
	ProjectID string
	AccountID *string
	// Number is E.164, or a 5-6 digit short code.
	Number   string
	Type     string
	Country  string
	Name     *string
	Metadata Metadata
	// Carrier is the Name of the adapter that provides the number.
	Carrier          string
	CampaignID       *string
	AttachmentStatus *string
	CreatedAt        time.Time
	UpdatedAt        time.Time
	ReleasedAt       *time.Time
}

// Campaign is a 10DLC campaign of an account.
type Campaign struct {
	ID        string
	ProjectID string
	AccountID string
	Status    string
	// Params are the registration parameters as JSON.
	Params          string
	TCRID           *string `gorm:"column:tcr_id"`
	RejectionReason *string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// TollFreeCampaign is the verification of one toll-free number.
type TollFreeCampaign struct {
	ID            string
	ProjectID     string
	AccountID     string
	PhoneNumberID string
	Status        string
	// Params are the verification parameters as JSON.
	Params          string
	RejectionReason *string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// HeldNumber returns the held (unreleased) phone number with this number, whoever holds it.
func (s *Store) HeldNumber(ctx context.Context, number string) (*PhoneNumber, error) {
	var n PhoneNumber
	if err := s.q(ctx).Where("number = ? AND released_at IS NULL", number).Take(&n).Error; err != nil {
		return nil, translate(err, "held number "+number)
	}
	return &n, nil
}
