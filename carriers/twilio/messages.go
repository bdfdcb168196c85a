package twilio

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/switchboard/switchboard/carriers"
)

// submission records a message Twilio accepted under our reference (migration 0007): Twilio's
// API has no client reference, so the adapter keeps this to make Submit idempotent.
type submission struct {
	Reference string `gorm:"primaryKey"`
	SID       string `gorm:"column:sid"`
	CreatedAt time.Time
}

func (submission) TableName() string { return "twilio_submissions" }

// messageResource is the part of a Message resource the adapter reads.
type messageResource struct {
	SID    string `json:"sid"`
	Status string `json:"status"`
}

// Submit sends a message with POST /Accounts/{AccountSid}/Messages.json. Its status callback
// URL carries the reference, so the receipt names it whichever instance receives the callback.
// A reference Twilio accepted before is answered with the first sid and sends nothing. A 400
// answer is a permanent refusal (its error code gives the reason); anything else, as a network
// error, 401 (wrong credentials), 429 or 5xx, is temporary and retried by the core.
//
// The record of a submission is written after Twilio accepts it: if this process dies between
// the two, the core's retry sends the message again (at least once, never lost).
func (c *Carrier) Submit(ctx context.Context, m carriers.Outbound) (carriers.Submission, error) {
	if m.Reference == "" {
		return carriers.Submission{}, errors.New("twilio: a message needs a reference")
	}
	var prior submission
	err := c.db(ctx).Where("reference = ?", m.Reference).Take(&prior).Error
	switch {
	case err == nil:
		return carriers.Submission{CarrierID: prior.SID, Duplicate: true}, nil
	case !errors.Is(err, gorm.ErrRecordNotFound):
		return carriers.Submission{}, fmt.Errorf("twilio: read submission %s: %w", m.Reference, err)
	}
	form := url.Values{
		"To":             {m.To},
		"From":           {m.From},
		"StatusCallback": {c.callbackURL("/messages/status?" + url.Values{"reference": {m.Reference}}.Encode())},
	}
	if m.Body != "" {
		form.Set("Body", m.Body)
	}
	for _, md := range m.Media {
		form.Add("MediaUrl", md.URL)
	}
	var res messageResource
	err = c.client.do(ctx, http.MethodPost, c.client.accountPath("/Messages.json"), nil, form, &res)
	var apiErr *apiError
	switch {
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusBadRequest:
		return carriers.Submission{}, &carriers.SubmitError{Permanent: true, Reason: failureReason(strconv.Itoa(apiErr.Code)), Err: err}
	case err != nil:
		return carriers.Submission{}, &carriers.SubmitError{Reason: carriers.FailureUnknown, Err: err}
	case res.SID == "":
		return carriers.Submission{}, &carriers.SubmitError{Reason: carriers.FailureUnknown, Err: errors.New("twilio: the answer has no message sid")}
	}
	rec := submission{Reference: m.Reference, SID: res.SID, CreatedAt: c.cfg.Now().UTC()}
	if err := c.db(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&rec).Error; err != nil {
		// The message is sent: answering an error would make the core send it again.
		c.cfg.Logger.Error("twilio: record a submission", "reference", m.Reference, "sid", res.SID, "err", err)
	}
	return carriers.Submission{CarrierID: res.SID}, nil
}

// db is the store's handle for the adapter's own table.
func (c *Carrier) db(ctx context.Context) *gorm.DB { return c.cfg.Store.DB().WithContext(ctx) }

var _ carriers.Messenger = (*Carrier)(nil)
