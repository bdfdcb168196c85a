package telnyx

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboard/switchboard/carriers"
)

// failureReasons maps Telnyx's messaging error codes (of a failed send or a message.finalized
// event) to failure reasons; any other code is unknown_error.
var failureReasons = map[string]string{
	"40001": carriers.FailureUnreachableCarrier,    // not routable
	"40002": carriers.FailureCarrierFiltered,       // blocked as spam (permanent)
	"40003": carriers.FailureCarrierFiltered,       // blocked as spam (temporary)
	"40008": carriers.FailureInvalidMobileNumber,   // undeliverable
	"40012": carriers.FailureInvalidMobileNumber,   // invalid destination number
	"40300": carriers.FailureOptedOutAtCarrier,     // blocked due to STOP message
	"40310": carriers.FailureInvalidMobileNumber,   // invalid to address
	"40318": carriers.FailureLandline,              // the destination is a landline
	"40010": carriers.FailureCarrierFiltered,       // not 10DLC registered
	"40311": carriers.FailureAttachmentUnreachable, // media could not be fetched
}

func failureReason(code string) string {
	if r, ok := failureReasons[code]; ok {
		return r
	}
	return carriers.FailureUnknown
}

// Submit sends a message: POST /v2/messages with the messaging profile, from, to, text and
// media_urls, its webhooks going to the adapter at a URL that carries the reference (see
// receiptReference). A reference Telnyx accepted before is answered with the first id and sends
// nothing (Telnyx has no client reference; the adapter keeps one). A 4xx answer other than 401,
// 403 and 429 is a permanent refusal; anything else is retried.
func (c *Carrier) Submit(ctx context.Context, m carriers.Outbound) (carriers.Submission, error) {
	if m.Reference == "" {
		return carriers.Submission{}, errors.New("telnyx: a message needs a reference")
	}
	prior, err := c.cfg.Store.SubmissionID(ctx, m.Reference)
	switch {
	case err != nil:
		return carriers.Submission{}, fmt.Errorf("telnyx: read submission %s: %w", m.Reference, err)
	case prior != "":
		return carriers.Submission{CarrierID: prior, Duplicate: true}, nil
	}
	body := map[string]any{"from": m.From, "to": m.To, "messaging_profile_id": c.cfg.MessagingProfileID,
		"webhook_url": c.webhookURL() + "?" + url.Values{"reference": {m.Reference}}.Encode(), "use_profile_webhooks": false}
	if m.Body != "" {
		body["text"] = m.Body
	}
	if len(m.Media) > 0 {
		urls := make([]string, len(m.Media))
		for i, md := range m.Media {
			urls[i] = md.URL
		}
		body["media_urls"], body["type"] = urls, "MMS"
	}
	var res struct {
		ID string `json:"id"`
	}
	err = c.call(ctx, http.MethodPost, "/v2/messages", nil, body, &res)
	var apiErr *apiError
	switch {
	case errors.As(err, &apiErr) && apiErr.Status >= 400 && apiErr.Status < 500 &&
		apiErr.Status != http.StatusUnauthorized && apiErr.Status != http.StatusForbidden && apiErr.Status != http.StatusTooManyRequests:
		return carriers.Submission{}, &carriers.SubmitError{Permanent: true, Reason: failureReason(apiErr.code()), Err: err}
	case err != nil:
		return carriers.Submission{}, &carriers.SubmitError{Reason: carriers.FailureUnknown, Err: err}
	case res.ID == "":
		return carriers.Submission{}, &carriers.SubmitError{Reason: carriers.FailureUnknown, Err: errors.New("telnyx: the answer has no message id")}
	}
	if err := c.cfg.Store.AddSubmission(ctx, m.Reference, res.ID, c.cfg.Now().UTC()); err != nil {
		// The message is sent: answering an error would make the core send it again.
		c.cfg.Logger.Error("telnyx: record a submission", "reference", m.Reference, "id", res.ID, "err", err)
	}
	return carriers.Submission{CarrierID: res.ID}, nil
}

// AuthorizeMedia adds the API key to a request for media under the API's own base (Telnyx's
// inbound media URLs are otherwise presigned and need none).
func (c *Carrier) AuthorizeMedia(req *http.Request) {
	if strings.HasPrefix(req.URL.String(), c.base+"/") {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
}

var (
	_ carriers.Messenger   = (*Carrier)(nil)
	_ carriers.MediaSource = (*Carrier)(nil)
)
