package twilio

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/switchboard/switchboard/carriers"
)

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
	prior, err := c.cfg.Store.SubmissionSID(ctx, m.Reference)
	switch {
	case err != nil:
		return carriers.Submission{}, fmt.Errorf("twilio: read submission %s: %w", m.Reference, err)
	case prior != "":
		return carriers.Submission{CarrierID: prior, Duplicate: true}, nil
	}
	form := url.Values{
		"To":             {m.To},
		"From":           {m.From},
		"StatusCallback": {c.callbackURL("/messages/status?" + url.Values{"reference": {m.Reference}}.Encode())},
	}
	if m.Body != "" {
		form.Set("Body", m.Body)
	}
	// A number added to an account's Messaging Service sends through it, under its campaign.
	service, err := c.cfg.Store.NumberService(ctx, m.From)
	if err != nil {
		return carriers.Submission{}, &carriers.SubmitError{Reason: carriers.FailureUnknown, Err: err}
	}
	if service != "" {
		form.Set("MessagingServiceSid", service)
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
	if err := c.cfg.Store.AddSubmission(ctx, m.Reference, res.SID, c.cfg.Now().UTC()); err != nil {
		// The message is sent: answering an error would make the core send it again.
		c.cfg.Logger.Error("twilio: record a submission", "reference", m.Reference, "sid", res.SID, "err", err)
	}
	return carriers.Submission{CarrierID: res.SID}, nil
}

var _ carriers.Messenger = (*Carrier)(nil)
