package telnyx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
)

// Registration with Telnyx: an account's brand is a 10DLC brand (POST /v2/10dlc/brand, once per
// account), each campaign a 10DLC campaign of it (POST /v2/10dlc/campaignBuilder), whose
// campaignStatus gives the verdict (MNO_PROVISIONED approves; TCR_FAILED, TELNYX_FAILED,
// MNO_REJECTED and MNO_PROVISIONING_FAILED reject, with Telnyx's failure reasons); numbers are
// assigned to a campaign with /v2/10dlc/phone_number_campaigns. A toll-free number is verified
// with /v2/messaging_tollfree/verification/requests (Verified approves, Rejected rejects with
// its reason). Submissions are recorded and a poll job takes them further, as with Twilio.

// Campaign statuses that decide.
var (
	campaignApproved = []string{"MNO_PROVISIONED"}
	campaignRejected = []string{"TCR_FAILED", "TELNYX_FAILED", "MNO_REJECTED", "MNO_PROVISIONING_FAILED"}
)

// entityTypes maps organization types to the brand's entityType.
var entityTypes = map[string]string{
	"sole_proprietor": "SOLE_PROPRIETOR", "non_profit": "NON_PROFIT", "government": "GOVERNMENT",
	"public_corporation": "PUBLIC_PROFIT", "private_corporation": "PRIVATE_PROFIT", "llc": "PRIVATE_PROFIT",
	"partnership": "PRIVATE_PROFIT", "co_op": "PRIVATE_PROFIT",
}

// useCases maps the contract's 10DLC use cases to Telnyx's (TCR's) usecase.
var useCases = map[string]string{
	"two_factor_authentication": "2FA", "account_notification": "ACCOUNT_NOTIFICATION", "customer_care": "CUSTOMER_CARE",
	"delivery_notification": "DELIVERY_NOTIFICATION", "fraud_alert": "FRAUD_ALERT", "higher_education": "HIGHER_EDUCATION",
	"marketing": "MARKETING", "polling_voting": "POLLING_VOTING", "public_service_announcement": "PUBLIC_SERVICE_ANNOUNCEMENT",
	"security_alert": "SECURITY_ALERT",
}

// SubmitCampaign registers a 10DLC campaign (and the account's brand first); an import by TCR id
// answers carriers.ErrUnsupported. A repeated reference amends a campaign not made yet.
func (c *Carrier) SubmitCampaign(ctx context.Context, s carriers.CampaignSubmission) error {
	if s.TCRID != "" {
		return fmt.Errorf("telnyx: importing a campaign by TCR id: %w", carriers.ErrUnsupported)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return c.record(ctx, s.Reference, s.AccountID, KindCampaign, raw)
}

// SubmitTollFreeVerification submits the verification of one of the account's toll-free numbers.
func (c *Carrier) SubmitTollFreeVerification(ctx context.Context, s carriers.TollFreeSubmission) error {
	raw, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return c.record(ctx, s.Reference, s.AccountID, KindTollFree, raw)
}

func (c *Carrier) record(ctx context.Context, reference, accountID, kind string, sub []byte) error {
	if reference == "" || accountID == "" {
		return errors.New("telnyx: a submission needs a reference and an account")
	}
	r, err := c.cfg.Store.Registration(ctx, reference)
	if err != nil {
		return err
	}
	if r == nil {
		r = &Registration{Reference: reference, AccountID: accountID, Kind: kind}
	}
	r.Submission, r.Open, r.SubmittedAt = sub, true, c.cfg.Now().UTC()
	if err := c.cfg.Store.SaveRegistration(ctx, r); err != nil {
		return err
	}
	return c.cfg.Store.InsertJob(ctx, pollArgs{Reference: reference}, nil)
}

// WithdrawCampaign deactivates a campaign (DELETE /v2/10dlc/campaign/{id}) or deletes a toll-free
// verification request; the registration is closed, so no verdict follows.
func (c *Carrier) WithdrawCampaign(ctx context.Context, reference string) error {
	r, err := c.cfg.Store.Registration(ctx, reference)
	if err != nil || r == nil {
		return err
	}
	unlock := c.lockAccount(r.AccountID)
	defer unlock()
	if r, err = c.cfg.Store.Registration(ctx, reference); err != nil {
		return err
	}
	if r.ID != "" {
		path := "/v2/10dlc/campaign/" + url.PathEscape(r.ID)
		if r.Kind == KindTollFree {
			path = "/v2/messaging_tollfree/verification/requests/" + url.PathEscape(r.ID)
		}
		if err := c.call(ctx, http.MethodDelete, path, nil, nil, nil); err != nil && !isStatus(err, http.StatusNotFound) {
			return fmt.Errorf("telnyx: withdraw %s: %w", reference, err)
		}
	}
	r.Open, r.ID, r.Status = false, "", "WITHDRAWN"
	return c.cfg.Store.SaveRegistration(ctx, r)
}

// RegistrationID is Telnyx's id of the registration made for reference, "" while none is made or
// once it is withdrawn.
func (c *Carrier) RegistrationID(ctx context.Context, reference string) (string, error) {
	r, err := c.cfg.Store.Registration(ctx, reference)
	if r == nil || err != nil {
		return "", err
	}
	return r.ID, nil
}

// AssignNumber assigns a number to the campaign submitted as reference.
func (c *Carrier) AssignNumber(ctx context.Context, reference, number string) error {
	r, err := c.cfg.Store.Registration(ctx, reference)
	if err != nil {
		return err
	}
	if r == nil || r.ID == "" {
		return fmt.Errorf("telnyx: campaign %s is not registered yet; assigning %s is retried", reference, number)
	}
	err = c.call(ctx, http.MethodPost, "/v2/10dlc/phone_number_campaigns", nil,
		map[string]string{"phoneNumber": number, "campaignId": r.ID}, nil)
	if err != nil && !isStatus(err, http.StatusConflict) {
		return fmt.Errorf("telnyx: assign %s to campaign %s: %w", number, r.ID, err)
	}
	return nil
}

// UnassignNumber takes a number off its campaign.
func (c *Carrier) UnassignNumber(ctx context.Context, _, number string) error {
	err := c.call(ctx, http.MethodDelete, "/v2/10dlc/phone_number_campaigns/"+url.PathEscape(number), nil, nil, nil)
	if err != nil && !isStatus(err, http.StatusNotFound) {
		return fmt.Errorf("telnyx: unassign %s: %w", number, err)
	}
	return nil
}

// pollArgs takes a registration one step further and reports its verdict.
type pollArgs struct {
	Reference string `json:"reference"`
}

// Kind names the job.
func (pollArgs) Kind() string { return "telnyx_poll" }

type pollWorker struct {
	river.WorkerDefaults[pollArgs]
	c *Carrier
}

// Work advances the registration and reports its verdict, polling again later until there is one.
func (w *pollWorker) Work(ctx context.Context, j *river.Job[pollArgs]) error {
	c := w.c
	r, err := c.cfg.Store.Registration(ctx, j.Args.Reference)
	if err != nil || r == nil || !r.Open {
		return err
	}
	unlock := c.lockAccount(r.AccountID)
	defer unlock()
	if r, err = c.cfg.Store.Registration(ctx, j.Args.Reference); err != nil || r == nil || !r.Open {
		return err
	}
	v, err := c.advance(ctx, r)
	var apiErr *apiError
	if v == nil && errors.As(err, &apiErr) && apiErr.Status >= 400 && apiErr.Status < 500 &&
		apiErr.Status != http.StatusUnauthorized && apiErr.Status != http.StatusNotFound && apiErr.Status != http.StatusTooManyRequests {
		v = &carriers.Verdict{Reason: "Telnyx refused the registration: " + apiErr.Error()}
	} else if err != nil {
		c.cfg.Logger.Warn("telnyx: registration step failed; retrying", "reference", r.Reference, "err", err)
	}
	if serr := c.cfg.Store.SaveRegistration(ctx, r); serr != nil {
		return serr
	}
	if v == nil {
		return river.JobSnooze(min(max(c.cfg.Now().Sub(r.SubmittedAt)/4, c.cfg.PollMin), c.cfg.PollMax))
	}
	v.Reference = r.Reference
	if err := c.cfg.Reporter.Report(ctx, carriers.Report{Carrier: Name, Verdict: v}); err != nil {
		return fmt.Errorf("telnyx: report the verdict on %s: %w", r.Reference, err)
	}
	r.Open = false
	return c.cfg.Store.SaveRegistration(ctx, r)
}

// advance makes the registration's next call or reads its status; it returns the verdict once
// Telnyx has decided.
func (c *Carrier) advance(ctx context.Context, r *Registration) (*carriers.Verdict, error) {
	if r.Kind == KindTollFree {
		return c.advanceTollFree(ctx, r)
	}
	var s carriers.CampaignSubmission
	if err := json.Unmarshal(r.Submission, &s); err != nil {
		return nil, err
	}
	if r.ID == "" {
		brand, err := c.brand(ctx, r.AccountID, s.Brand)
		if err != nil || brand == "" {
			return nil, err
		}
		body := campaignBody(s, brand)
		var res struct {
			CampaignID string `json:"campaignId"`
			Status     string `json:"campaignStatus"`
		}
		if err := c.call(ctx, http.MethodPost, "/v2/10dlc/campaignBuilder", nil, body, &res); err != nil {
			return nil, err
		}
		r.ID, r.Status = res.CampaignID, res.Status
		return nil, nil
	}
	var res struct {
		Status         string `json:"campaignStatus"`
		FailureReasons []struct {
			Description string `json:"description"`
		} `json:"failureReasons"`
	}
	if err := c.call(ctx, http.MethodGet, "/v2/10dlc/campaign/"+url.PathEscape(r.ID), nil, nil, &res); err != nil {
		return nil, err
	}
	r.Status = res.Status
	switch {
	case slices.Contains(campaignApproved, res.Status):
		return &carriers.Verdict{Approved: true}, nil
	case slices.Contains(campaignRejected, res.Status):
		var why []string
		for _, f := range res.FailureReasons {
			why = append(why, f.Description)
		}
		if len(why) == 0 {
			why = append(why, res.Status)
		}
		return &carriers.Verdict{Reason: "Telnyx rejected the campaign: " + strings.Join(why, "; ")}, nil
	}
	return nil, nil
}

// brand returns the account's 10DLC brand id, registering the brand when it has none.
func (c *Carrier) brand(ctx context.Context, accountID string, b carriers.Brand) (string, error) {
	id, err := c.cfg.Store.BrandID(ctx, accountID)
	if err != nil || id != "" {
		return id, err
	}
	body := map[string]any{
		"entityType": entityTypes[b.Type], "displayName": b.Name, "companyName": b.RegisteredName, "ein": b.Identifier,
		"phone": b.Contact.PhoneNumber, "street": b.Address.Line1, "city": b.Address.Locality, "state": b.Address.Region,
		"postalCode": b.Address.PostalCode, "country": b.Address.Country, "email": b.Email, "website": b.Website,
		"vertical": strings.ToUpper(b.Industry), "firstName": b.Contact.FirstName, "lastName": b.Contact.LastName,
	}
	if b.StockSymbol != "" {
		body["stockSymbol"], body["stockExchange"] = b.StockSymbol, strings.ToUpper(b.StockExchange)
	}
	var res struct {
		BrandID string `json:"brandId"`
	}
	if err := c.call(ctx, http.MethodPost, "/v2/10dlc/brand", nil, body, &res); err != nil {
		return "", err
	}
	return res.BrandID, c.cfg.Store.SetBrandID(ctx, accountID, res.BrandID)
}

// campaignBody is a 10DLC campaign of the brand, as campaignBuilder takes it.
func campaignBody(s carriers.CampaignSubmission, brandID string) map[string]any {
	usecase := "LOW_VOLUME"
	switch {
	case len(s.UseCases) == 1:
		usecase = useCases[s.UseCases[0]]
	case s.Volume == "high":
		usecase = "MIXED"
	}
	body := map[string]any{
		"brandId": brandID, "usecase": usecase, "description": s.Description, "messageFlow": s.ConsentFlow,
		"helpMessage": s.HelpMessage, "optinMessage": s.OptInMessage, "optoutMessage": s.OptOutMessage,
		"embeddedLink": slices.Contains(s.Includes, "links"), "embeddedPhone": slices.Contains(s.Includes, "phone_numbers"),
		"ageGated": slices.Contains(s.Includes, "age_gated"), "directLending": slices.Contains(s.Includes, "direct_lending"),
		"numberPool": false, "subscriberOptin": true, "subscriberOptout": true, "subscriberHelp": true,
		"optinKeywords": "START,UNSTOP,YES", "optoutKeywords": "STOP,STOPALL,UNSUBSCRIBE,CANCEL,END,QUIT", "helpKeywords": "HELP,INFO",
		"termsAndConditions": true,
	}
	for i, sample := range s.MessageSamples {
		if i < 5 {
			body[fmt.Sprintf("sample%d", i+1)] = sample
		}
	}
	if s.PrivacyPolicyURL != "" {
		body["privacyPolicyLink"] = s.PrivacyPolicyURL
	}
	if s.TermsAndConditionsURL != "" {
		body["termsAndConditionsLink"] = s.TermsAndConditionsURL
	}
	return body
}

// advanceTollFree submits a toll-free verification request or reads its status.
func (c *Carrier) advanceTollFree(ctx context.Context, r *Registration) (*carriers.Verdict, error) {
	var s carriers.TollFreeSubmission
	if err := json.Unmarshal(r.Submission, &s); err != nil {
		return nil, err
	}
	path := "/v2/messaging_tollfree/verification/requests"
	var res struct {
		ID     string `json:"id"`
		Status string `json:"verificationStatus"`
		Reason string `json:"reason"`
	}
	if r.ID == "" {
		b := s.Brand
		body := map[string]any{
			"businessName": b.RegisteredName, "corporateWebsite": b.Website, "businessAddr1": b.Address.Line1,
			"businessCity": b.Address.Locality, "businessState": b.Address.Region, "businessZip": b.Address.PostalCode,
			"businessContactFirstName": b.Contact.FirstName, "businessContactLastName": b.Contact.LastName,
			"businessContactEmail": b.Contact.Email, "businessContactPhone": b.Contact.PhoneNumber,
			"messageVolume": "1,000", "phoneNumbers": []map[string]string{{"phoneNumber": s.PhoneNumber}},
			"useCase": tollFreeUseCase(s.UseCases), "useCaseSummary": s.Description,
			"productionMessageContent": strings.Join(s.MessageSamples, "\n"), "optInWorkflow": "Recipients opt in on the business's website.",
			"optInWorkflowImageURLs": []map[string]string{{"url": b.Website}}, "additionalInformation": s.Reference,
			"isvReseller": "Switchboard", "webhookUrl": c.webhookURL(),
		}
		if err := c.call(ctx, http.MethodPost, path, nil, body, &res); err != nil {
			return nil, err
		}
		r.ID, r.Status = res.ID, res.Status
		return nil, nil
	}
	if err := c.call(ctx, http.MethodGet, path+"/"+url.PathEscape(r.ID), nil, nil, &res); err != nil {
		return nil, err
	}
	r.Status = res.Status
	switch res.Status {
	case "Verified":
		return &carriers.Verdict{Approved: true}, nil
	case "Rejected":
		if res.Reason == "" {
			res.Reason = "no reason given"
		}
		return &carriers.Verdict{Reason: "Telnyx rejected the toll-free verification: " + res.Reason}, nil
	}
	return nil, nil
}

// tollFreeUseCase is the toll-free verification's useCase for the contract's use cases.
func tollFreeUseCase(cases []string) string {
	names := map[string]string{
		"two_factor_authentication": "Two-Factor Authentication", "account_notification": "Account Notifications",
		"customer_care": "Customer Care", "charity": "Charity / Non-Profit", "delivery_notification": "Delivery Notifications",
		"fraud_alert": "Fraud Alert Messaging", "event": "Events", "higher_education": "Higher Education", "k12_education": "K-12",
		"marketing": "Marketing", "polling_voting": "Polling and Voting (Non-political)", "political": "Political",
		"public_service_announcement": "Public Service Announcement", "security_alert": "Security Alert",
	}
	if len(cases) == 0 {
		return names["account_notification"]
	}
	return names[cases[0]]
}

// lockAccount serializes the registration work of one account in this process.
func (c *Carrier) lockAccount(accountID string) func() {
	m, _ := c.accounts.LoadOrStore(accountID, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

var (
	_ carriers.CampaignRegistry = (*Carrier)(nil)
	_ carriers.NumberAssigner   = (*Carrier)(nil)
)
