package store

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
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
	AttachmentPending  = "attachment_pending"
	AttachmentDone     = "attached"
	AttachmentDetached = "detached"
)

// PhoneNumber is a number held by the installation: an account's purchased number, or the shared
// demo number (ProjectID and AccountID empty), which migration 0003 creates.
type PhoneNumber struct {
	ID        string
	ProjectID string
	AccountID *string
	// Number is E.164, or a 5-6 digit short code.
	Number  string
	Type    string
	Country string
	Name    *string
	// Metadata is the number's key-value metadata.
	Metadata Metadata
	// Carrier is the Name of the adapter that provides the number; "" (the demo number) means the
	// installation's default carrier.
	Carrier string
	// CampaignID and AttachmentStatus are set together, only on US local numbers attached to a
	// 10DLC campaign. AttachmentStatus is attached exactly while the campaign is active.
	CampaignID       *string
	AttachmentStatus *string
	CreatedAt        time.Time
	UpdatedAt        time.Time
	// ReleasedAt is set when the number is given back; a released number is gone from the API.
	ReleasedAt *time.Time
}

// HeldNumber returns the held (unreleased) phone number with this number, whoever holds it.
func (s *Store) HeldNumber(ctx context.Context, number string) (*PhoneNumber, error) {
	var n PhoneNumber
	if err := s.q(ctx).Where("number = ? AND released_at IS NULL", number).Take(&n).Error; err != nil {
		return nil, translate(err, "held number "+number)
	}
	return &n, nil
}

// HeldAmong returns which of numbers are held by anyone (the demo number included).
func (s *Store) HeldAmong(ctx context.Context, numbers []string) (map[string]bool, error) {
	held := map[string]bool{}
	if len(numbers) == 0 {
		return held, nil
	}
	var found []string
	if err := s.q(ctx).Model(&PhoneNumber{}).Where("number IN ? AND released_at IS NULL", numbers).
		Pluck("number", &found).Error; err != nil {
		return nil, translate(err, "held numbers")
	}
	for _, n := range found {
		held[n] = true
	}
	return held, nil
}

// InsertPhoneNumber records a number an account now holds. A number already held by anyone is
// ErrDuplicate.
// It records the number with the request's claimed Idempotency-Key, if any (WithIdempotencyClaim).
func (s *Store) InsertPhoneNumber(ctx context.Context, n *PhoneNumber) error {
	n.ID = NewID(PrefixPhoneNumber)
	n.CreatedAt = now()
	n.UpdatedAt = n.CreatedAt
	if n.Metadata == nil {
		n.Metadata = Metadata{}
	}
	return s.creating(ctx, n.ID, func(tx *Store) error { return translate(tx.q(ctx).Create(n).Error, "insert phone number") })
}

// GetPhoneNumber returns a held number of the project; a released one is ErrNotFound. Inside Tx
// on PostgreSQL the row stays locked until the transaction ends.
func (s *Store) GetPhoneNumber(ctx context.Context, projectID, id string) (*PhoneNumber, error) {
	return getRow[PhoneNumber](s, ctx, "get phone number "+id, "id = ? AND project_id = ? AND released_at IS NULL", id, projectID)
}

// ListPhoneNumbers returns one page of the numbers an account holds.
func (s *Store) ListPhoneNumbers(ctx context.Context, projectID, accountID string, p Page) ([]PhoneNumber, Cursors, error) {
	return listOfAccount(s, ctx, projectID, accountID, p, func(n *PhoneNumber) string { return n.ID }, "released_at IS NULL")
}

// UpdatePhoneNumber writes every field of n.
func (s *Store) UpdatePhoneNumber(ctx context.Context, n *PhoneNumber) error {
	n.UpdatedAt = now()
	return translate(s.q(ctx).Select("*").Updates(n).Error, "update phone number "+n.ID)
}

// ReleasePhoneNumber marks a held number released (one released already stays as it was).
func (s *Store) ReleasePhoneNumber(ctx context.Context, n *PhoneNumber) error {
	t := now()
	res := s.q(ctx).Model(&PhoneNumber{}).Where("id = ? AND released_at IS NULL", n.ID).
		Updates(map[string]any{"released_at": t, "updated_at": t})
	if res.Error != nil {
		return translate(res.Error, "release phone number "+n.ID)
	}
	if res.RowsAffected == 1 {
		n.ReleasedAt, n.UpdatedAt = &t, t
	}
	return nil
}

// ReleaseAccountNumbers marks every number the account holds released and returns them.
func (s *Store) ReleaseAccountNumbers(ctx context.Context, accountID string) ([]PhoneNumber, error) {
	return s.updateNumbers(ctx, map[string]any{"released_at": now()}, "release the numbers of "+accountID,
		"account_id = ? AND released_at IS NULL", accountID)
}

// AttachPendingNumbers completes the pending attachments to a campaign (which has just become
// active) and returns the numbers now attached.
func (s *Store) AttachPendingNumbers(ctx context.Context, campaignID string) ([]PhoneNumber, error) {
	return s.updateNumbers(ctx, map[string]any{"attachment_status": AttachmentDone}, "attach numbers to "+campaignID,
		"campaign_id = ? AND attachment_status = ? AND released_at IS NULL", campaignID, AttachmentPending)
}

// updateNumbers sets columns of the numbers that where selects and returns them as they are now.
func (s *Store) updateNumbers(ctx context.Context, set map[string]any, what, where string, args ...any) ([]PhoneNumber, error) {
	var ids []string
	if err := s.q(ctx).Model(&PhoneNumber{}).Where(where, args...).Order("id").Pluck("id", &ids).Error; err != nil {
		return nil, translate(err, what)
	}
	out := []PhoneNumber{}
	if len(ids) == 0 {
		return out, nil
	}
	set["updated_at"] = now()
	if err := s.q(ctx).Model(&PhoneNumber{}).Where("id IN ?", ids).Updates(set).Error; err != nil {
		return nil, translate(err, what)
	}
	err := s.q(ctx).Where("id IN ?", ids).Order("id").Find(&out).Error
	return out, translate(err, what)
}

// DetachPendingNumbers marks the pending attachments to a campaign (which was rejected) detached.
func (s *Store) DetachPendingNumbers(ctx context.Context, campaignID string) error {
	err := s.q(ctx).Model(&PhoneNumber{}).
		Where("campaign_id = ? AND attachment_status = ? AND released_at IS NULL", campaignID, AttachmentPending).
		Updates(map[string]any{"attachment_status": AttachmentDetached, "updated_at": now()}).Error
	return translate(err, "detach numbers from campaign "+campaignID)
}

// DetachCampaignNumbers detaches every held number from a campaign that is being deactivated,
// whether its attachment was pending or done.
func (s *Store) DetachCampaignNumbers(ctx context.Context, campaignID string) error {
	err := s.q(ctx).Model(&PhoneNumber{}).
		Where("campaign_id = ? AND attachment_status IN ? AND released_at IS NULL", campaignID, []string{AttachmentPending, AttachmentDone}).
		Updates(map[string]any{"attachment_status": AttachmentDetached, "updated_at": now()}).Error
	return translate(err, "detach numbers from campaign "+campaignID)
}

// LocalRegistration reports whether an account has an active 10DLC campaign, and whether one of
// its held numbers is attached to an active campaign.
func (s *Store) LocalRegistration(ctx context.Context, accountID string) (activeCampaign, attachedNumber bool, err error) {
	var campaigns, numbers int64
	if err := s.q(ctx).Model(&Campaign{}).Where("account_id = ? AND status = ?", accountID, CampaignActive).
		Count(&campaigns).Error; err != nil {
		return false, false, translate(err, "count active campaigns")
	}
	err = s.q(ctx).Model(&PhoneNumber{}).
		Joins("JOIN campaigns ON campaigns.id = phone_numbers.campaign_id").
		Where("phone_numbers.account_id = ? AND phone_numbers.released_at IS NULL AND phone_numbers.attachment_status = ? AND campaigns.status = ?",
			accountID, AttachmentDone, CampaignActive).
		Count(&numbers).Error
	if err != nil {
		return false, false, translate(err, "count attached numbers")
	}
	return campaigns > 0, numbers > 0, nil
}

// LockAccount returns a project's account like GetAccount; inside Tx on PostgreSQL the row stays
// locked, so what the transaction adds to the account cannot race with its archiving.
func (s *Store) LockAccount(ctx context.Context, projectID, id string) (*Account, error) {
	return getRow[Account](s, ctx, "get account "+id, "id = ? AND project_id = ?", id, projectID)
}

// forUpdate is a query that, inside Tx on PostgreSQL, locks the rows it reads until the
// transaction ends. SQLite transactions take the database's write lock when they begin
// (_txlock=immediate), so they need no row locks.
func (s *Store) forUpdate(ctx context.Context) *gorm.DB {
	q := s.q(ctx)
	if s.dialect == Postgres && sqlTx(s.db) != nil {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	return q
}
