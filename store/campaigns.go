package store

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"time"
)

// Campaign is a 10DLC campaign of an account.
type Campaign struct {
	ID        string
	ProjectID string
	AccountID string
	// Carrier is the Name of the adapter whose registry the campaign is registered with.
	Carrier string
	Status  string
	Params  CampaignParams
	// TCRID is set on campaigns imported from The Campaign Registry; their Params are empty.
	TCRID           *string `gorm:"column:tcr_id"`
	RejectionReason *string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// CampaignParams are a 10DLC campaign's registration details, stored as a JSON object.
type CampaignParams struct {
	UseCases              []string `json:"use_cases"`
	Description           string   `json:"description"`
	MessageSamples        []string `json:"message_samples"`
	ConsentFlow           string   `json:"consent_flow"`
	Includes              []string `json:"includes"`
	PrivacyPolicyURL      *string  `json:"privacy_policy_url"`
	TermsAndConditionsURL *string  `json:"terms_and_conditions_url"`
	LinkSample            *string  `json:"link_sample"`
	Volume                string   `json:"volume"`
}

// Value encodes the parameters as JSON.
func (p CampaignParams) Value() (driver.Value, error) { return jsonValue(p) }

// Scan decodes the parameters from JSON.
func (p *CampaignParams) Scan(src any) error { return scanJSON(src, p) }

// TollFreeCampaign is the verification of one toll-free number.
type TollFreeCampaign struct {
	ID            string
	ProjectID     string
	AccountID     string
	PhoneNumberID string
	// Carrier is the Name of the adapter that provides the number and verifies it.
	Carrier         string
	Status          string
	Params          TollFreeParams
	RejectionReason *string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// TollFreeParams are a toll-free verification's details, stored as a JSON object.
type TollFreeParams struct {
	UseCases              []string `json:"use_cases"`
	Description           string   `json:"description"`
	MessageSamples        []string `json:"message_samples"`
	Includes              []string `json:"includes"`
	PrivacyPolicyURL      string   `json:"privacy_policy_url"`
	TermsAndConditionsURL string   `json:"terms_and_conditions_url"`
}

// Value encodes the parameters as JSON.
func (p TollFreeParams) Value() (driver.Value, error) { return jsonValue(p) }

// Scan decodes the parameters from JSON.
func (p *TollFreeParams) Scan(src any) error { return scanJSON(src, p) }

// Groups of campaign statuses.
var (
	// ReviewableStatuses are those of a campaign that awaits the registry's verdict: created (not
	// yet acknowledged by the registry, or amended) and in_review.
	ReviewableStatuses = []string{CampaignCreated, CampaignInReview}
	// OpenStatuses are those of a campaign that is not finished.
	OpenStatuses = []string{CampaignCreated, CampaignInReview, CampaignActive}
)

// CreateCampaign inserts a 10DLC campaign.
// It records the campaign with the request's claimed Idempotency-Key, if any (WithIdempotencyClaim).
func (s *Store) CreateCampaign(ctx context.Context, c *Campaign) error {
	c.ID = NewID(PrefixCampaign)
	c.CreatedAt = now()
	c.UpdatedAt = c.CreatedAt
	return s.creating(ctx, c.ID, func(tx *Store) error { return translate(tx.q(ctx).Create(c).Error, "create campaign") })
}

// GetCampaign returns a project's campaign; inside Tx on PostgreSQL the row stays locked.
func (s *Store) GetCampaign(ctx context.Context, projectID, id string) (*Campaign, error) {
	return getRow[Campaign](s, ctx, "get campaign "+id, "id = ? AND project_id = ?", id, projectID)
}

// CampaignByID returns any project's campaign, for carrier reports and jobs; inside Tx on
// PostgreSQL the row stays locked.
func (s *Store) CampaignByID(ctx context.Context, id string) (*Campaign, error) {
	return getRow[Campaign](s, ctx, "campaign "+id, "id = ?", id)
}

// CampaignUnderReview returns an account's newest campaign that the registry has yet to decide
// (created or in review); ErrNotFound when there is none.
func (s *Store) CampaignUnderReview(ctx context.Context, accountID string) (*Campaign, error) {
	var c Campaign
	err := s.q(ctx).Where("account_id = ? AND status IN ?", accountID, ReviewableStatuses).Order("id DESC").Take(&c).Error
	if err != nil {
		return nil, translate(err, "campaign under review of "+accountID)
	}
	return &c, nil
}

// ListCampaigns returns one page of an account's campaigns.
func (s *Store) ListCampaigns(ctx context.Context, projectID, accountID string, p Page) ([]Campaign, Cursors, error) {
	return listOfAccount(s, ctx, projectID, accountID, p, func(c *Campaign) string { return c.ID })
}

// UpdateCampaign writes every field of c.
func (s *Store) UpdateCampaign(ctx context.Context, c *Campaign) error {
	c.UpdatedAt = now()
	return translate(s.q(ctx).Select("*").Updates(c).Error, "update campaign "+c.ID)
}

// DeleteCampaign removes a campaign the registry refused outright, while it is still created. In
// the request that created it, its Idempotency-Key forgets it too: the request created nothing.
func (s *Store) DeleteCampaign(ctx context.Context, id string) error {
	return s.creating(ctx, "", func(tx *Store) error {
		return translate(tx.q(ctx).Where("id = ? AND status = ?", id, CampaignCreated).Delete(&Campaign{}).Error,
			"delete campaign "+id)
	})
}

// TransitionCampaign moves a campaign from one of the statuses from to status to, recording
// reason when it is not nil, and reports whether it moved.
func (s *Store) TransitionCampaign(ctx context.Context, id string, from []string, to string, reason *string) (bool, error) {
	return transition[Campaign](s, ctx, id, from, to, reason)
}

// CreateTollFreeCampaign inserts a toll-free verification. A number that already has one that is
// created, in review or active is ErrDuplicate.
// It records the campaign with the request's claimed Idempotency-Key, if any (WithIdempotencyClaim).
func (s *Store) CreateTollFreeCampaign(ctx context.Context, t *TollFreeCampaign) error {
	t.ID = NewID(PrefixTollFreeCampaign)
	t.CreatedAt = now()
	t.UpdatedAt = t.CreatedAt
	return s.creating(ctx, t.ID, func(tx *Store) error { return translate(tx.q(ctx).Create(t).Error, "create toll-free campaign") })
}

// GetTollFreeCampaign returns a project's toll-free campaign; inside Tx on PostgreSQL the row
// stays locked.
func (s *Store) GetTollFreeCampaign(ctx context.Context, projectID, id string) (*TollFreeCampaign, error) {
	return getRow[TollFreeCampaign](s, ctx, "get toll-free campaign "+id, "id = ? AND project_id = ?", id, projectID)
}

// TollFreeCampaignByID returns any project's toll-free campaign, for carrier reports and jobs;
// inside Tx on PostgreSQL the row stays locked.
func (s *Store) TollFreeCampaignByID(ctx context.Context, id string) (*TollFreeCampaign, error) {
	return getRow[TollFreeCampaign](s, ctx, "toll-free campaign "+id, "id = ?", id)
}

// ListTollFreeCampaigns returns one page of an account's toll-free campaigns.
func (s *Store) ListTollFreeCampaigns(ctx context.Context, projectID, accountID string, p Page) ([]TollFreeCampaign, Cursors, error) {
	return listOfAccount(s, ctx, projectID, accountID, p, func(t *TollFreeCampaign) string { return t.ID })
}

// DeleteTollFreeCampaign removes a toll-free campaign the registry refused outright, while it is
// still created.
func (s *Store) DeleteTollFreeCampaign(ctx context.Context, id string) error {
	return translate(s.q(ctx).Where("id = ? AND status = ?", id, CampaignCreated).Delete(&TollFreeCampaign{}).Error,
		"delete toll-free campaign "+id)
}

// TransitionTollFreeCampaign moves a toll-free campaign from one of the statuses from to status
// to, recording reason when it is not nil, and reports whether it moved.
func (s *Store) TransitionTollFreeCampaign(ctx context.Context, id string, from []string, to string, reason *string) (bool, error) {
	return transition[TollFreeCampaign](s, ctx, id, from, to, reason)
}

// CancelNumberTollFreeCampaigns cancels the unfinished toll-free campaigns of a number (which is
// being released) and returns them as they were, to withdraw them at their carriers.
func (s *Store) CancelNumberTollFreeCampaigns(ctx context.Context, phoneNumberID string) ([]TollFreeCampaign, error) {
	return endRows[TollFreeCampaign](s, ctx, CampaignCanceled, "cancel toll-free campaigns of "+phoneNumberID, "phone_number_id = ?", phoneNumberID)
}

// DeactivateAccountCampaigns deactivates an archived account's unfinished 10DLC campaigns and
// returns them as they were, to withdraw them at their carriers.
func (s *Store) DeactivateAccountCampaigns(ctx context.Context, accountID string) ([]Campaign, error) {
	return endRows[Campaign](s, ctx, CampaignDeactivated, "deactivate campaigns of "+accountID, "account_id = ?", accountID)
}

// CancelAccountTollFreeCampaigns cancels an archived account's unfinished toll-free campaigns and
// returns them as they were, to withdraw them at their carriers.
func (s *Store) CancelAccountTollFreeCampaigns(ctx context.Context, accountID string) ([]TollFreeCampaign, error) {
	return endRows[TollFreeCampaign](s, ctx, CampaignCanceled, "cancel toll-free campaigns of "+accountID, "account_id = ?", accountID)
}

// endRows moves the unfinished rows of T (campaigns or toll-free campaigns) that where selects to
// status to, locking them in id order on PostgreSQL, and returns them as they were.
func endRows[T any](s *Store, ctx context.Context, to, what, where string, args ...any) ([]T, error) {
	var rows []T
	if err := s.forUpdate(ctx).Where(where, args...).Where("status IN ?", OpenStatuses).Order("id").Find(&rows).Error; err != nil {
		return nil, translate(err, what)
	}
	if len(rows) == 0 {
		return rows, nil
	}
	err := s.q(ctx).Model(new(T)).Where(where, args...).Where("status IN ?", OpenStatuses).
		Updates(map[string]any{"status": to, "updated_at": now()}).Error
	return rows, translate(err, what)
}

// listOfAccount returns one page of a project's account's rows of T, which cond (a condition and
// its arguments), when given, narrows.
func listOfAccount[T any](s *Store, ctx context.Context, projectID, accountID string, p Page, idOf func(*T) string, cond ...any) ([]T, Cursors, error) {
	if _, err := s.GetAccount(ctx, projectID, accountID); err != nil {
		return nil, Cursors{}, err
	}
	q := s.q(ctx).Model(new(T)).Where("account_id = ?", accountID)
	if len(cond) > 0 {
		q = q.Where(cond[0], cond[1:]...)
	}
	return paginate(q, p, idOf)
}

// getRow returns the row of T that where selects; inside Tx on PostgreSQL it stays locked.
func getRow[T any](s *Store, ctx context.Context, what, where string, args ...any) (*T, error) {
	var row T
	if err := s.forUpdate(ctx).Where(where, args...).Take(&row).Error; err != nil {
		return nil, translate(err, what)
	}
	return &row, nil
}

// transition is a compare-and-set of a row's status: of two concurrent transitions from the same
// status, exactly one moves the row.
func transition[T any](s *Store, ctx context.Context, id string, from []string, to string, reason *string) (bool, error) {
	set := map[string]any{"status": to, "updated_at": now()}
	if reason != nil {
		set["rejection_reason"] = *reason
	}
	res := s.q(ctx).Model(new(T)).Where("id = ? AND status IN ?", id, from).Updates(set)
	if res.Error != nil {
		return false, translate(res.Error, fmt.Sprintf("move %s to %s", id, to))
	}
	return res.RowsAffected == 1, nil
}

func jsonValue(v any) (driver.Value, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func scanJSON(src, dst any) error {
	var b []byte
	switch v := src.(type) {
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("store: JSON column from %T", src)
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("store: decode JSON column: %w", err)
	}
	return nil
}
