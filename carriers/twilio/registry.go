package twilio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
)

// Registration with Twilio, as its A2P 10DLC and toll-free guides describe it for a platform that
// registers its customers' brands (an ISV):
//
//  1. the account's brand becomes a TrustHub secondary customer profile (business information,
//     authorized representative, address; evaluated, then submitted for review) and an A2P trust
//     product (messaging profile information and that customer profile; evaluated, submitted);
//  2. an A2P brand registration is made of the two bundles;
//  3. each campaign gets a Messaging Service of its own (Twilio takes one A2P campaign per
//     service) and, once the brand is APPROVED, is that service's US A2P compliance registration
//     (Compliance/Usa2p), whose campaign_status is the verdict;
//  4. numbers attached to a campaign are added to its Messaging Service, and messages from them
//     are sent through it.
//
// A toll-free verification is a Tollfree/Verifications resource of the number, whose status
// (PENDING_REVIEW, IN_REVIEW, TWILIO_APPROVED, TWILIO_REJECTED) gives the verdict, with its
// rejection reasons.
//
// SubmitCampaign and SubmitTollFreeVerification record the submission and leave the work to a
// poll job, which makes the next calls, reads the statuses and reports the verdict; it polls
// again after a quarter of the time the registration has waited (between PollMin and PollMax),
// and at once when TrustHub posts a bundle's status callback. Every sid is recorded as soon as
// Twilio made it, so a failed or interrupted step continues where it stopped. Twilio's 4xx
// refusals of a registration (other than 401, 404 and 429) are final: they reject it with
// Twilio's message.

// TrustHub policies: Twilio's own, the same in every account.
const (
	// secondaryProfilePolicy is the policy of a secondary customer profile of a business.
	secondaryProfilePolicy = "RNdfbf3fae0e1107f8aded0e7cead80bf5"
	// a2pProductPolicy is the policy of an A2P messaging profile trust product.
	a2pProductPolicy = "RNb0d4771c2c98518d916a3d4cd70a8f8b"
)

// Statuses Twilio gives, as far as the adapter reads them.
const (
	brandApproved    = "APPROVED"
	brandFailed      = "FAILED"
	campaignVerified = "VERIFIED"
	campaignFailed   = "FAILED"
	tollFreeApproved = "TWILIO_APPROVED"
	tollFreeRejected = "TWILIO_REJECTED"
	profileRejected  = "twilio-rejected"
	evaluationPassed = "compliant"
	alreadyInService = 21710 // the phone number is already in the Messaging Service
)

// SubmitCampaign registers a 10DLC campaign for the account's Messaging Service (and the
// account's brand first, when it is not yet); an import by TCR id is not a Twilio operation
// (carriers.ErrUnsupported). A repeated reference amends the submission.
func (c *Carrier) SubmitCampaign(ctx context.Context, s carriers.CampaignSubmission) error {
	if s.TCRID != "" {
		return fmt.Errorf("twilio: importing a campaign by TCR id: %w", carriers.ErrUnsupported)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return c.record(ctx, s.Reference, s.AccountID, KindCampaign, raw)
}

// SubmitTollFreeVerification submits the verification of one of the account's toll-free numbers.
// A repeated reference amends a rejected verification.
func (c *Carrier) SubmitTollFreeVerification(ctx context.Context, s carriers.TollFreeSubmission) error {
	raw, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return c.record(ctx, s.Reference, s.AccountID, KindTollFree, raw)
}

// record keeps a submission (or its amendment) and has the poll job take it to Twilio.
func (c *Carrier) record(ctx context.Context, reference, accountID, kind string, sub json.RawMessage) error {
	if reference == "" || accountID == "" {
		return errors.New("twilio: a submission needs a reference and an account")
	}
	r, err := c.cfg.Store.Registration(ctx, reference)
	if err != nil {
		return fmt.Errorf("twilio: read registration %s: %w", reference, err)
	}
	if r == nil {
		r = &Registration{Reference: reference, AccountID: accountID, Kind: kind}
	}
	r.Amended = r.SID != ""
	r.Open, r.Verdict, r.SubmittedAt = true, nil, c.cfg.Now().UTC()
	if kind == KindCampaign {
		r.Campaign = &sub
	} else {
		r.TollFree = &sub
	}
	if err := c.cfg.Store.SaveRegistration(ctx, r); err != nil {
		return fmt.Errorf("twilio: record registration %s: %w", reference, err)
	}
	return c.cfg.Store.InsertJob(ctx, pollArgs{Reference: reference}, nil)
}

// WithdrawCampaign deletes a campaign's compliance registration or a toll-free verification at
// Twilio; the registration is closed, so no verdict follows. The brand and the Messaging Service
// stay: other campaigns of the account use them.
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
	if r.SID != "" {
		path := "/v1/Tollfree/Verifications/" + url.PathEscape(r.SID)
		if r.Kind == KindCampaign {
			path = "/v1/Services/" + url.PathEscape(r.ServiceSID) + "/Compliance/Usa2p/" + url.PathEscape(r.SID)
		}
		if err := c.client.at(ctx, c.client.messaging, http.MethodDelete, path, nil, nil, nil); err != nil && !isStatus(err, http.StatusNotFound) {
			return fmt.Errorf("twilio: withdraw %s: %w", reference, err)
		}
	}
	r.Open, r.Verdict, r.SID, r.Status = false, nil, "", "WITHDRAWN"
	return c.cfg.Store.SaveRegistration(ctx, r)
}

// RegistrationSID is Twilio's sid of the registration made for reference (QE… or HH…), "" while
// none is made or once it is withdrawn.
func (c *Carrier) RegistrationSID(ctx context.Context, reference string) (string, error) {
	r, err := c.cfg.Store.Registration(ctx, reference)
	if r == nil || err != nil {
		return "", err
	}
	return r.SID, nil
}

// pollArgs takes a registration one step further and reports its verdict.
type pollArgs struct {
	Reference string `json:"reference"`
}

// Kind names the job.
func (pollArgs) Kind() string { return "twilio_poll" }

type pollWorker struct {
	river.WorkerDefaults[pollArgs]
	c *Carrier
}

// Work advances the registration; while no verdict is known it polls again later (JobSnooze),
// and a verdict the core refuses is reported again on River's retry.
func (w *pollWorker) Work(ctx context.Context, j *river.Job[pollArgs]) error {
	c := w.c
	r, err := c.cfg.Store.Registration(ctx, j.Args.Reference)
	if err != nil || r == nil || !r.Open {
		return err
	}
	// One account's registrations are worked on one at a time in this process (polls of one
	// registration can overlap: a submission's and a status callback's), then read afresh.
	unlock := c.lockAccount(r.AccountID)
	defer unlock()
	if r, err = c.cfg.Store.Registration(ctx, j.Args.Reference); err != nil || r == nil || !r.Open {
		return err
	}
	if r.Verdict == nil {
		err := c.advance(ctx, r)
		if final := permanent(err); final != "" {
			r.Verdict = &Verdict{Reason: "Twilio refused the registration: " + final}
		} else if err != nil {
			c.cfg.Logger.Warn("twilio: registration step failed; retrying", "reference", r.Reference, "err", err)
		}
		if serr := c.cfg.Store.SaveRegistration(ctx, r); serr != nil {
			return serr
		}
	}
	if r.Verdict == nil {
		return river.JobSnooze(c.pollDelay(r))
	}
	// A withdrawal since the job read the registration wins.
	if now, err := c.cfg.Store.Registration(ctx, r.Reference); err != nil || now == nil || !now.Open {
		return err
	}
	v := &carriers.Verdict{Reference: r.Reference, Approved: r.Verdict.Approved, Reason: r.Verdict.Reason}
	if err := c.cfg.Reporter.Report(ctx, carriers.Report{Carrier: Name, Verdict: v}); err != nil {
		return fmt.Errorf("twilio: report the verdict on %s: %w", r.Reference, err)
	}
	r.Open = false
	return c.cfg.Store.SaveRegistration(ctx, r)
}

// pollDelay is when a registration under review is looked at again: a quarter of the time it has
// waited, between PollMin and PollMax.
func (c *Carrier) pollDelay(r *Registration) time.Duration {
	return min(max(c.cfg.Now().Sub(r.SubmittedAt)/4, c.cfg.PollMin), c.cfg.PollMax)
}

// advance makes the registration's next calls and reads its status, setting r.Verdict when
// Twilio has decided (or when the registration cannot be made at all).
func (c *Carrier) advance(ctx context.Context, r *Registration) error {
	if r.Kind == KindTollFree {
		var s carriers.TollFreeSubmission
		if err := json.Unmarshal(*r.TollFree, &s); err != nil {
			return err
		}
		return c.advanceTollFree(ctx, r, s)
	}
	var s carriers.CampaignSubmission
	if err := json.Unmarshal(*r.Campaign, &s); err != nil {
		return err
	}
	if missing := missingBrandFields(s.Brand); len(missing) > 0 {
		r.Verdict = &Verdict{Reason: "the account's organization lacks what Twilio registers a brand with: " + strings.Join(missing, ", ")}
		return nil
	}
	if _, ok := industries[s.Brand.Industry]; !ok {
		r.Verdict = &Verdict{Reason: "Twilio's TrustHub has no business industry for " + s.Brand.Industry + "; choose another industry"}
		return nil
	}
	b, err := c.brand(ctx, r.AccountID, s.Brand)
	if err != nil || b.reason != "" {
		if b != nil && b.reason != "" {
			r.Verdict = &Verdict{Reason: b.reason}
		}
		return err
	}
	switch b.BrandStatus {
	case brandFailed:
		r.Verdict = &Verdict{Reason: "Twilio failed the brand registration: " + b.failure}
		return nil
	case brandApproved:
	default:
		return nil // the brand is in review; the campaign follows its approval
	}
	if err := c.ensureService(ctx, r, s.Brand.Name); err != nil {
		return err
	}
	base := "/v1/Services/" + url.PathEscape(r.ServiceSID) + "/Compliance/Usa2p"
	var res struct {
		SID    string          `json:"sid"`
		Status string          `json:"campaign_status"`
		Errors []twilioProblem `json:"errors"`
	}
	switch {
	case r.SID == "":
		if err := c.client.at(ctx, c.client.messaging, http.MethodPost, base, nil, usa2pForm(s, b.BrandSID), &res); err != nil {
			return err
		}
		r.SID, r.Amended = res.SID, false
	case r.Amended:
		form := usa2pForm(s, "")
		for _, k := range []string{"BrandRegistrationSid", "UsAppToPersonUsecase", "OptInMessage", "OptOutMessage", "HelpMessage",
			"OptInKeywords", "OptOutKeywords", "HelpKeywords", "SubscriberOptIn"} {
			form.Del(k) // not fields of an update
		}
		if err := c.client.at(ctx, c.client.messaging, http.MethodPost, base+"/"+url.PathEscape(r.SID), nil, form, &res); err != nil {
			return err
		}
		r.Amended = false
	default:
		if err := c.client.at(ctx, c.client.messaging, http.MethodGet, base+"/"+url.PathEscape(r.SID), nil, nil, &res); err != nil {
			return err
		}
	}
	r.Status = res.Status
	switch res.Status {
	case campaignVerified:
		r.Verdict = &Verdict{Approved: true}
	case campaignFailed:
		r.Verdict = &Verdict{Reason: "Twilio failed the campaign: " + problems(res.Errors, "no reason given")}
	}
	return nil
}

// advanceTollFree submits (or amends) a toll-free verification and reads its status.
func (c *Carrier) advanceTollFree(ctx context.Context, r *Registration, s carriers.TollFreeSubmission) error {
	var res struct {
		SID              string  `json:"sid"`
		Status           string  `json:"status"`
		RejectionReason  *string `json:"rejection_reason"`
		ErrorCode        *int    `json:"error_code"`
		RejectionReasons []struct {
			Code   int    `json:"code"`
			Reason string `json:"reason"`
		} `json:"rejection_reasons"`
	}
	path := "/v1/Tollfree/Verifications"
	switch {
	case r.SID == "":
		pn, err := c.numberSID(ctx, s.PhoneNumber)
		if err != nil {
			return err
		}
		if pn == "" {
			r.Verdict = &Verdict{Reason: s.PhoneNumber + " is not a number of the Twilio account"}
			return nil
		}
		form, missing := tollFreeForm(s, c.notificationEmail(s.Brand))
		if len(missing) > 0 {
			r.Verdict = &Verdict{Reason: "the account's organization lacks what Twilio verifies a toll-free number with: " + strings.Join(missing, ", ")}
			return nil
		}
		form.Set("TollfreePhoneNumberSid", pn)
		form.Set("ExternalReferenceId", r.Reference)
		if err := c.client.at(ctx, c.client.messaging, http.MethodPost, path, nil, form, &res); err != nil {
			return err
		}
		r.SID, r.Amended = res.SID, false
	case r.Amended && r.Status == tollFreeRejected:
		form, _ := tollFreeForm(s, c.notificationEmail(s.Brand))
		form.Set("EditReason", "Amended after the rejection")
		if err := c.client.at(ctx, c.client.messaging, http.MethodPost, path+"/"+url.PathEscape(r.SID), nil, form, &res); err != nil {
			return err
		}
		r.Amended = false
	default:
		if err := c.client.at(ctx, c.client.messaging, http.MethodGet, path+"/"+url.PathEscape(r.SID), nil, nil, &res); err != nil {
			return err
		}
	}
	r.Status = res.Status
	switch res.Status {
	case tollFreeApproved:
		r.Verdict = &Verdict{Approved: true}
	case tollFreeRejected:
		var reasons []string
		for _, rr := range res.RejectionReasons {
			reasons = append(reasons, fmt.Sprintf("%s (%d)", rr.Reason, rr.Code))
		}
		if len(reasons) == 0 && res.RejectionReason != nil {
			reasons = append(reasons, *res.RejectionReason)
		}
		if len(reasons) == 0 {
			reasons = append(reasons, "no reason given")
		}
		r.Verdict = &Verdict{Reason: "Twilio rejected the toll-free verification: " + strings.Join(reasons, "; ")}
	}
	return nil
}

// brandProgress is a BrandState with what this pass learnt: a reason registration cannot go on,
// and the brand registration's failure.
type brandProgress struct {
	*BrandState
	reason, failure string
}

// brand registers the account's brand as far as Twilio lets it go now; the caller holds the
// account's lock.
func (c *Carrier) brand(ctx context.Context, accountID string, brand carriers.Brand) (*brandProgress, error) {
	st, err := c.cfg.Store.Brand(ctx, accountID)
	if err != nil {
		return nil, err
	}
	if st == nil {
		st = &BrandState{AccountID: accountID}
	}
	b := &brandProgress{BrandState: st}
	save := func() error { return c.cfg.Store.SaveBrand(ctx, b.BrandState) }
	// create makes a resource when its sid is not recorded yet, and records it.
	create := func(sid *string, base, path string, form url.Values) error {
		if *sid != "" {
			return nil
		}
		var res struct {
			SID string `json:"sid"`
		}
		if err := c.client.at(ctx, base, http.MethodPost, path, nil, form, &res); err != nil {
			return err
		}
		*sid = res.SID
		return save()
	}
	assign := func(bundles, bundle, object string) error {
		key := bundle + "/" + object
		for _, a := range b.Assigned {
			if a == key {
				return nil
			}
		}
		err := c.client.at(ctx, c.client.trusthub, http.MethodPost, "/v1/"+bundles+"/"+url.PathEscape(bundle)+"/EntityAssignments",
			nil, url.Values{"ObjectSid": {object}}, nil)
		if err != nil {
			return err
		}
		b.Assigned = append(b.Assigned, key)
		return save()
	}
	email := c.notificationEmail(brand)
	callback := c.callbackURL("/trusthub/status")
	th := c.client.trusthub

	// The secondary customer profile.
	steps := []func() error{
		func() error {
			return create(&b.CustomerProfileSID, th, "/v1/CustomerProfiles", url.Values{"FriendlyName": {brand.RegisteredName},
				"Email": {email}, "PolicySid": {secondaryProfilePolicy}, "StatusCallback": {callback}})
		},
		func() error {
			return create(&b.BusinessInfoSID, th, "/v1/EndUsers", url.Values{"FriendlyName": {brand.RegisteredName + " business information"},
				"Type": {"customer_profile_business_information"}, "Attributes": {businessInformation(brand)}})
		},
		func() error { return assign("CustomerProfiles", b.CustomerProfileSID, b.BusinessInfoSID) },
		func() error {
			return create(&b.RepresentativeSID, th, "/v1/EndUsers", url.Values{"FriendlyName": {brand.Contact.FirstName + " " + brand.Contact.LastName},
				"Type": {"authorized_representative_1"}, "Attributes": {representative(brand)}})
		},
		func() error { return assign("CustomerProfiles", b.CustomerProfileSID, b.RepresentativeSID) },
		func() error {
			a := brand.Address
			form := url.Values{"CustomerName": {brand.RegisteredName}, "Street": {a.Line1}, "City": {a.Locality}, "Region": {a.Region},
				"PostalCode": {a.PostalCode}, "IsoCountry": {a.Country}, "FriendlyName": {brand.RegisteredName}}
			if a.Line2 != "" {
				form.Set("StreetSecondary", a.Line2)
			}
			return create(&b.AddressSID, c.client.base, c.client.accountPath("/Addresses.json"), form)
		},
		func() error {
			attrs, _ := json.Marshal(map[string]string{"address_sids": b.AddressSID})
			return create(&b.AddressDocSID, th, "/v1/SupportingDocuments", url.Values{"FriendlyName": {brand.RegisteredName + " address"},
				"Type": {"customer_profile_address"}, "Attributes": {string(attrs)}})
		},
		func() error { return assign("CustomerProfiles", b.CustomerProfileSID, b.AddressDocSID) },
		func() error {
			if c.cfg.PrimaryCustomerProfileSID == "" {
				return nil
			}
			return assign("CustomerProfiles", b.CustomerProfileSID, c.cfg.PrimaryCustomerProfileSID)
		},
		func() error {
			if b.ProfileSubmitted {
				return nil
			}
			if reason, err := c.evaluate(ctx, "CustomerProfiles", b.CustomerProfileSID, secondaryProfilePolicy); err != nil || reason != "" {
				b.reason = reason
				return err
			}
			if err := c.client.at(ctx, th, http.MethodPost, "/v1/CustomerProfiles/"+url.PathEscape(b.CustomerProfileSID), nil,
				url.Values{"Status": {"pending-review"}}, nil); err != nil {
				return err
			}
			b.ProfileSubmitted = true
			return save()
		},
		// The A2P trust product.
		func() error {
			return create(&b.TrustProductSID, th, "/v1/TrustProducts", url.Values{"FriendlyName": {brand.RegisteredName + " A2P"},
				"Email": {email}, "PolicySid": {a2pProductPolicy}, "StatusCallback": {callback}})
		},
		func() error {
			return create(&b.A2PInfoSID, th, "/v1/EndUsers", url.Values{"FriendlyName": {brand.RegisteredName + " messaging profile"},
				"Type": {"us_a2p_messaging_profile_information"}, "Attributes": {messagingProfile(brand)}})
		},
		func() error { return assign("TrustProducts", b.TrustProductSID, b.A2PInfoSID) },
		func() error { return assign("TrustProducts", b.TrustProductSID, b.CustomerProfileSID) },
		func() error {
			if b.ProductSubmitted {
				return nil
			}
			if reason, err := c.evaluate(ctx, "TrustProducts", b.TrustProductSID, a2pProductPolicy); err != nil || reason != "" {
				b.reason = reason
				return err
			}
			if err := c.client.at(ctx, th, http.MethodPost, "/v1/TrustProducts/"+url.PathEscape(b.TrustProductSID), nil,
				url.Values{"Status": {"pending-review"}}, nil); err != nil {
				return err
			}
			b.ProductSubmitted = true
			return save()
		},
		// The brand registration.
		func() error {
			return create(&b.BrandSID, c.client.messaging, "/v1/a2p/BrandRegistrations",
				url.Values{"CustomerProfileBundleSid": {b.CustomerProfileSID}, "A2PProfileBundleSid": {b.TrustProductSID}})
		},
	}
	for _, step := range steps {
		if err := step(); err != nil || b.reason != "" {
			return b, err
		}
	}
	if b.BrandStatus == brandApproved || b.BrandStatus == brandFailed {
		return b, nil
	}
	var res struct {
		Status        string          `json:"status"`
		FailureReason *string         `json:"failure_reason"`
		Errors        []twilioProblem `json:"errors"`
	}
	if err := c.client.at(ctx, c.client.messaging, http.MethodGet, "/v1/a2p/BrandRegistrations/"+url.PathEscape(b.BrandSID), nil, nil, &res); err != nil {
		return b, err
	}
	b.BrandStatus = res.Status
	if res.FailureReason != nil {
		b.failure = *res.FailureReason
	}
	if b.failure == "" {
		b.failure = problems(res.Errors, "no reason given")
	}
	return b, save()
}

// evaluate checks a bundle against its policy; a noncompliant bundle gives the reason.
func (c *Carrier) evaluate(ctx context.Context, bundles, bundle, policy string) (string, error) {
	var res struct {
		Status  string `json:"status"`
		Results []struct {
			FriendlyName string `json:"friendly_name"`
			Passed       bool   `json:"passed"`
			Failure      string `json:"failure_reason"`
		} `json:"results"`
	}
	err := c.client.at(ctx, c.client.trusthub, http.MethodPost, "/v1/"+bundles+"/"+url.PathEscape(bundle)+"/Evaluations", nil,
		url.Values{"PolicySid": {policy}}, &res)
	if err != nil || res.Status == evaluationPassed {
		return "", err
	}
	var failed []string
	for _, r := range res.Results {
		if !r.Passed {
			failed = append(failed, strings.TrimSpace(r.FriendlyName+" "+r.Failure))
		}
	}
	return "Twilio's evaluation of the " + strings.TrimSuffix(bundles, "s") + " failed: " + strings.Join(failed, "; "), nil
}

// AssignNumber adds a number to the Messaging Service of the campaign submitted as reference (made
// now when the campaign has none yet), so that its messages go out under the campaign.
func (c *Carrier) AssignNumber(ctx context.Context, reference, number string) error {
	r, err := c.cfg.Store.Registration(ctx, reference)
	if err != nil {
		return err
	}
	if r == nil || r.Kind != KindCampaign {
		return fmt.Errorf("twilio: no campaign %s to assign %s to", reference, number)
	}
	unlock := c.lockAccount(r.AccountID)
	defer unlock()
	if r, err = c.cfg.Store.Registration(ctx, reference); err != nil {
		return err
	}
	var s carriers.CampaignSubmission
	if err := json.Unmarshal(*r.Campaign, &s); err != nil {
		return err
	}
	if err := c.ensureService(ctx, r, s.Brand.Name); err != nil {
		return err
	}
	pn, err := c.numberSID(ctx, number)
	if err != nil || pn == "" {
		return errors.Join(err, errors.New("twilio: "+number+" is not a number of the account"))
	}
	if old, err := c.cfg.Store.NumberService(ctx, number); err != nil {
		return err
	} else if old != "" && old != r.ServiceSID {
		if err := c.UnassignNumber(ctx, "", number); err != nil {
			return err
		}
	}
	err = c.client.at(ctx, c.client.messaging, http.MethodPost, "/v1/Services/"+url.PathEscape(r.ServiceSID)+"/PhoneNumbers", nil,
		url.Values{"PhoneNumberSid": {pn}}, nil)
	var apiErr *apiError
	if err != nil && !(errors.As(err, &apiErr) && apiErr.Code == alreadyInService) {
		return fmt.Errorf("twilio: add %s to the Messaging Service: %w", number, err)
	}
	return c.cfg.Store.SetNumberService(ctx, number, r.ServiceSID)
}

// UnassignNumber takes a number off the Messaging Service it was added to.
func (c *Carrier) UnassignNumber(ctx context.Context, _, number string) error {
	service, err := c.cfg.Store.NumberService(ctx, number)
	if err != nil || service == "" {
		return err
	}
	pn, err := c.numberSID(ctx, number)
	if err != nil {
		return err
	}
	if pn != "" {
		err = c.client.at(ctx, c.client.messaging, http.MethodDelete, "/v1/Services/"+url.PathEscape(service)+"/PhoneNumbers/"+url.PathEscape(pn), nil, nil, nil)
		if err != nil && !isStatus(err, http.StatusNotFound) {
			return fmt.Errorf("twilio: take %s off the Messaging Service: %w", number, err)
		}
	}
	return c.cfg.Store.SetNumberService(ctx, number, "")
}

// ensureService gives a campaign its Messaging Service when it has none yet (Twilio takes one A2P
// campaign per service), and records it; the caller holds the account's lock.
func (c *Carrier) ensureService(ctx context.Context, r *Registration, name string) error {
	if r.ServiceSID != "" {
		return nil
	}
	var res struct {
		SID string `json:"sid"`
	}
	if err := c.client.at(ctx, c.client.messaging, http.MethodPost, "/v1/Services", nil,
		url.Values{"FriendlyName": {name + " " + r.Reference}, "UseInboundWebhookOnNumber": {"true"}}, &res); err != nil {
		return err
	}
	r.ServiceSID = res.SID
	return c.cfg.Store.SaveRegistration(ctx, r)
}

// numberSID returns the sid (PN…) of one of the account's incoming numbers, "" when it has none.
func (c *Carrier) numberSID(ctx context.Context, number string) (string, error) {
	var res struct {
		Numbers []struct {
			SID         string `json:"sid"`
			PhoneNumber string `json:"phone_number"`
		} `json:"incoming_phone_numbers"`
	}
	if err := c.client.do(ctx, http.MethodGet, c.client.accountPath("/IncomingPhoneNumbers.json"),
		url.Values{"PhoneNumber": {number}}, nil, &res); err != nil {
		return "", err
	}
	for _, n := range res.Numbers {
		if n.PhoneNumber == number {
			return n.SID, nil
		}
	}
	return "", nil
}

// trusthubStatus is TrustHub's status callback of a bundle: it polls the registrations of the
// bundle's account at once.
func (c *Carrier) trusthubStatus(w http.ResponseWriter, r *http.Request) {
	account, err := c.cfg.Store.AccountOfBundle(r.Context(), r.PostForm.Get("BundleSid"))
	if err == nil && account != "" {
		var open []Registration
		if open, err = c.cfg.Store.OpenRegistrations(r.Context(), account); err == nil {
			for _, reg := range open {
				if err = c.cfg.Store.InsertJob(r.Context(), pollArgs{Reference: reg.Reference}, nil); err != nil {
					break
				}
			}
		}
	}
	if err != nil {
		c.cfg.Logger.Error("twilio: TrustHub status callback", "err", err)
		http.Error(w, "try again", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// lockAccount serializes the registration work of one account in this process.
func (c *Carrier) lockAccount(accountID string) func() {
	m, _ := c.accounts.LoadOrStore(accountID, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// notificationEmail is where Twilio sends its notices about a brand's registrations.
func (c *Carrier) notificationEmail(b carriers.Brand) string {
	switch {
	case c.cfg.NotificationEmail != "":
		return c.cfg.NotificationEmail
	case b.Email != "":
		return b.Email
	}
	return b.Contact.Email
}

// twilioProblem is an entry of a resource's errors list.
type twilioProblem struct {
	Code        int    `json:"code"`
	Description string `json:"description"`
}

func problems(ps []twilioProblem, none string) string {
	var out []string
	for _, p := range ps {
		out = append(out, strings.TrimSpace(p.Description+" ("+strconv.Itoa(p.Code)+")"))
	}
	if len(out) == 0 {
		return none
	}
	return strings.Join(out, "; ")
}

// permanent is Twilio's message when err is a final refusal of a registration request (a 4xx
// other than 401, 404 and 429), else "".
func permanent(err error) string {
	var apiErr *apiError
	if !errors.As(err, &apiErr) || apiErr.Status < 400 || apiErr.Status > 499 {
		return ""
	}
	switch apiErr.Status {
	case http.StatusUnauthorized, http.StatusNotFound, http.StatusTooManyRequests:
		return ""
	}
	return fmt.Sprintf("%s (%d)", apiErr.Message, apiErr.Code)
}

// isStatus reports whether err is an answer of the REST API with that HTTP status.
func isStatus(err error, status int) bool {
	var apiErr *apiError
	return errors.As(err, &apiErr) && apiErr.Status == status
}

var (
	_ carriers.CampaignRegistry = (*Carrier)(nil)
	_ carriers.NumberAssigner   = (*Carrier)(nil)
)
