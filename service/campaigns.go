package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// A campaign is stored `created` and submitted to its carrier's registry within the request;
// once the registry has it, it is `in_review` until the verdict arrives through Reports. When the
// registry cannot be reached, the campaign stays `created` and a submit job, enqueued with it,
// submits it later: no request loses a campaign, and none waits on a transaction across a carrier
// call. An update before approval amends the campaign: it is `created` again and resubmitted
// under the same reference.

// submitRetryDelay is when the submit job enqueued with a campaign runs; by then the request has
// normally submitted it and the job finds nothing to do.
const submitRetryDelay = 30 * time.Second

// CampaignFields are the registration fields of a 10DLC campaign request; nil fields are absent.
type CampaignFields struct {
	UseCases              *[]string
	Description           *string
	MessageSamples        *[]string
	ConsentFlow           *string
	Includes              *[]string
	PrivacyPolicyURL      *string
	TermsAndConditionsURL *string
	LinkSample            *string
	Volume                *string
}

// present returns the contract's names of the fields given.
func (f CampaignFields) present() []string {
	var out []string
	for name, given := range map[string]bool{
		"use_cases": f.UseCases != nil, "description": f.Description != nil, "message_samples": f.MessageSamples != nil,
		"consent_flow": f.ConsentFlow != nil, "includes": f.Includes != nil, "privacy_policy_url": f.PrivacyPolicyURL != nil,
		"terms_and_conditions_url": f.TermsAndConditionsURL != nil, "link_sample": f.LinkSample != nil, "volume": f.Volume != nil,
	} {
		if given {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// apply overlays the fields given on p.
func (f CampaignFields) apply(p *store.CampaignParams) {
	if f.UseCases != nil {
		p.UseCases = *f.UseCases
	}
	if f.Description != nil {
		p.Description = *f.Description
	}
	if f.MessageSamples != nil {
		p.MessageSamples = *f.MessageSamples
	}
	if f.ConsentFlow != nil {
		p.ConsentFlow = *f.ConsentFlow
	}
	if f.Includes != nil {
		p.Includes = *f.Includes
	}
	if f.PrivacyPolicyURL != nil {
		p.PrivacyPolicyURL = f.PrivacyPolicyURL
	}
	if f.TermsAndConditionsURL != nil {
		p.TermsAndConditionsURL = f.TermsAndConditionsURL
	}
	if f.LinkSample != nil {
		p.LinkSample = f.LinkSample
	}
	if f.Volume != nil {
		p.Volume = *f.Volume
	}
}

// checkCreate enforces the contract's two shapes of a new campaign: the standard registration, or
// only a TCR id.
func (f CampaignFields) checkCreate(tcrID *string) error {
	if tcrID != nil {
		if given := f.present(); len(given) > 0 {
			return Invalid("tcr_id", "cannot be combined with "+strings.Join(given, ", ")+": an imported campaign is registered already")
		}
		return nil
	}
	detail := map[string]any{}
	for name, missing := range map[string]bool{
		"use_cases": f.UseCases == nil, "description": f.Description == nil, "message_samples": f.MessageSamples == nil,
		"consent_flow": f.ConsentFlow == nil, "privacy_policy_url": f.PrivacyPolicyURL == nil, "volume": f.Volume == nil,
	} {
		if missing {
			detail[name] = []string{"is required (or give only tcr_id to import a registered campaign)"}
		}
	}
	if len(detail) > 0 {
		return &Error{Type: TypeValidation, Message: "The campaign is missing required fields; see detail.", Detail: detail}
	}
	return nil
}

// CreateCampaign registers a 10DLC campaign for an account with the registry of the named carrier
// (the default one when carrier is empty): the standard registration fields, or only tcrID to
// import a campaign registered elsewhere.
func (n *Numbers) CreateCampaign(ctx context.Context, projectID, accountID string, f CampaignFields, tcrID *string, carrier string) (*store.Campaign, error) {
	if err := f.checkCreate(tcrID); err != nil {
		return nil, err
	}
	if err := n.knownCarrier(carrier); err != nil {
		return nil, err
	}
	reg, err := n.cfg.Carriers.Registry(carrier)
	if err != nil {
		return nil, err
	}
	c := &store.Campaign{
		ProjectID: projectID, AccountID: accountID, Carrier: reg.Name(), Status: store.CampaignCreated, TCRID: tcrID,
		Params: store.CampaignParams{UseCases: []string{}, MessageSamples: []string{}, Includes: []string{}},
	}
	f.apply(&c.Params)
	if tcrID != nil {
		// An import's details stay with the registry; the contract's volume cannot be empty.
		c.Params.Volume = "low"
	}
	err = n.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		if err := lockActiveAccount(ctx, tx, projectID, accountID); err != nil {
			return err
		}
		if err := tx.CreateCampaign(ctx, c); err != nil {
			return err
		}
		return tx.InsertJob(ctx, submitArgs{ID: c.ID}, n.submitLater())
	})
	if err != nil {
		return nil, err
	}
	if err := n.submitNow(ctx, c.ID); errors.Is(err, carriers.ErrUnsupported) {
		// The registry will never take it (an import it cannot do): the campaign was never made.
		if derr := n.cfg.Store.DeleteCampaign(ctx, c.ID); derr != nil {
			return nil, derr
		}
		if tcrID != nil {
			return nil, Errorf(TypeNotImplemented, "the %s carrier does not support importing campaigns by TCR id", reg.Name())
		}
		return nil, ErrCapability(reg.Name(), "registering campaigns (import one registered elsewhere with tcr_id)")
	}
	return n.cfg.Store.GetCampaign(ctx, projectID, c.ID)
}

// UpdateCampaign amends a campaign that is not approved yet (409 conflict once it is active,
// rejected or deactivated) and resubmits it.
func (n *Numbers) UpdateCampaign(ctx context.Context, projectID, id string, f CampaignFields) (*store.Campaign, error) {
	changed := len(f.present()) > 0
	err := n.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		c, err := tx.GetCampaign(ctx, projectID, id)
		if err != nil {
			return err
		}
		if !slices.Contains(store.ReviewableStatuses, c.Status) {
			return &Error{Type: TypeConflict, Detail: map[string]any{"status": c.Status},
				Message: fmt.Sprintf("campaign %s is %s; only a campaign that is not approved yet can change", c.ID, c.Status)}
		}
		if !changed {
			return nil
		}
		f.apply(&c.Params)
		c.Status = store.CampaignCreated
		if err := tx.UpdateCampaign(ctx, c); err != nil {
			return err
		}
		return tx.InsertJob(ctx, submitArgs{ID: c.ID}, n.submitLater())
	})
	if err != nil {
		return nil, err
	}
	if changed {
		_ = n.submitNow(ctx, id) // a registry that takes the campaign takes its amendment
	}
	return n.cfg.Store.GetCampaign(ctx, projectID, id)
}

// CreateTollFreeCampaign submits the verification of one of the account's toll-free numbers to
// the registry of the number's carrier. A number has at most one verification that is created,
// in review or active (409 conflict for a second).
func (n *Numbers) CreateTollFreeCampaign(ctx context.Context, projectID, accountID, phoneNumberID string, p store.TollFreeParams) (*store.TollFreeCampaign, error) {
	t := &store.TollFreeCampaign{ProjectID: projectID, AccountID: accountID, PhoneNumberID: phoneNumberID,
		Status: store.CampaignCreated, Params: p}
	err := n.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		if err := lockActiveAccount(ctx, tx, projectID, accountID); err != nil {
			return err
		}
		pn, err := tx.GetPhoneNumber(ctx, projectID, phoneNumberID)
		switch {
		case errors.Is(err, store.ErrNotFound) || (err == nil && (pn.AccountID == nil || *pn.AccountID != accountID)):
			return Invalid("phone_number_id", "is not a phone number of this account")
		case err != nil:
			return err
		case pn.Type != store.NumberTollFree:
			return Invalid("phone_number_id", "is not a toll-free number (a local number is attached to a 10DLC campaign instead)")
		}
		reg, err := n.cfg.Carriers.Registry(pn.Carrier)
		if err != nil {
			return err
		}
		t.Carrier = reg.Name()
		if err := tx.CreateTollFreeCampaign(ctx, t); errors.Is(err, store.ErrDuplicate) {
			return Errorf(TypeConflict, "phone number %s already has a toll-free campaign that is created, in review or active", phoneNumberID)
		} else if err != nil {
			return err
		}
		return tx.InsertJob(ctx, submitArgs{ID: t.ID}, n.submitLater())
	})
	if err != nil {
		return nil, err
	}
	if err := n.submitNow(ctx, t.ID); errors.Is(err, carriers.ErrUnsupported) {
		// The registry will never take it (it verifies no toll-free numbers): it was never made.
		if derr := n.cfg.Store.DeleteTollFreeCampaign(ctx, t.ID); derr != nil {
			return nil, derr
		}
		return nil, ErrCapability(t.Carrier, "toll-free verification")
	}
	// Any other registry refuses a verification through its verdict.
	return n.cfg.Store.GetTollFreeCampaign(ctx, projectID, t.ID)
}

// CancelTollFreeCampaign cancels a toll-free campaign and withdraws it at its carrier; one
// already canceled or rejected is a 409 conflict.
func (n *Numbers) CancelTollFreeCampaign(ctx context.Context, projectID, id string) (*store.TollFreeCampaign, error) {
	err := n.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		t, err := tx.GetTollFreeCampaign(ctx, projectID, id)
		if err != nil {
			return err
		}
		if moved, err := tx.TransitionTollFreeCampaign(ctx, id, store.OpenStatuses, store.CampaignCanceled, nil); err != nil {
			return err
		} else if !moved {
			return &Error{Type: TypeConflict, Detail: map[string]any{"status": t.Status},
				Message: fmt.Sprintf("toll-free campaign %s is %s already", t.ID, t.Status)}
		}
		return tx.InsertJob(ctx, withdrawArgs{Carrier: t.Carrier, Reference: t.ID}, nil)
	})
	if err != nil {
		return nil, err
	}
	return n.cfg.Store.GetTollFreeCampaign(ctx, projectID, id)
}

// DeactivateCampaign deactivates a 10DLC campaign that is not finished (409 conflict once it is
// rejected or deactivated): its numbers are detached, campaign.deactivated is emitted, and a job
// withdraws it at its carrier after the commit.
func (n *Numbers) DeactivateCampaign(ctx context.Context, projectID, id string) (*store.Campaign, error) {
	err := n.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		// The campaign is locked before its numbers (see ArchiveAccount).
		c, err := tx.GetCampaign(ctx, projectID, id)
		if err != nil {
			return err
		}
		if moved, err := tx.TransitionCampaign(ctx, id, store.OpenStatuses, store.CampaignDeactivated, nil); err != nil {
			return err
		} else if !moved {
			return &Error{Type: TypeConflict, Detail: map[string]any{"status": c.Status},
				Message: fmt.Sprintf("campaign %s is %s already", c.ID, c.Status)}
		}
		if err := tx.DetachCampaignNumbers(ctx, c.ID); err != nil {
			return err
		}
		return campaignDeactivated(ctx, tx, c)
	})
	if err != nil {
		return nil, err
	}
	return n.cfg.Store.GetCampaign(ctx, projectID, id)
}

// campaignDeactivated records what follows the deactivation of c, in its transaction: the event
// campaign.deactivated and the job that withdraws it at its carrier.
func campaignDeactivated(ctx context.Context, tx *store.Store, c *store.Campaign) error {
	data := webhooks.CampaignStatusData{ID: c.ID, Status: store.CampaignDeactivated}
	if err := publish(ctx, tx, c.ProjectID, c.AccountID, webhooks.EventCampaignDeactivated, data); err != nil {
		return err
	}
	return tx.InsertJob(ctx, withdrawArgs{Carrier: c.Carrier, Reference: c.ID}, nil)
}

// withdrawArgs withdraws a deactivated campaign (cpn_…) or canceled toll-free campaign (tfc_…)
// from the registry of its carrier, after the transaction that ended it commits.
type withdrawArgs struct {
	Carrier   string `json:"carrier"`
	Reference string `json:"reference"`
}

// Kind names the job.
func (withdrawArgs) Kind() string { return "withdraw_campaign" }

type withdrawWorker struct {
	river.WorkerDefaults[withdrawArgs]
	n *Numbers
}

// Work withdraws the campaign; a carrier that is gone or cannot withdraw (carriers.ErrUnsupported)
// is told to the operator in the log, and the job ends: the campaign stays deactivated here, and
// the operator withdraws it with that carrier.
func (w *withdrawWorker) Work(ctx context.Context, j *river.Job[withdrawArgs]) error {
	reg, err := w.n.cfg.Carriers.Registry(j.Args.Carrier)
	if err == nil {
		if err = reg.WithdrawCampaign(ctx, j.Args.Reference); err == nil || !errors.Is(err, carriers.ErrUnsupported) {
			return err
		}
	}
	w.n.cfg.Logger.Warn("a campaign ended here, but its carrier cannot withdraw it: withdraw it with the carrier",
		"reference", j.Args.Reference, "carrier", j.Args.Carrier, "err", err)
	return river.JobCancel(err)
}

// lockActiveAccount locks an account for a transaction that adds to it, refusing an archived one.
func lockActiveAccount(ctx context.Context, tx *store.Store, projectID, accountID string) error {
	a, err := tx.LockAccount(ctx, projectID, accountID)
	if err != nil {
		return err
	}
	if a.ArchivedAt != nil {
		return archived(a)
	}
	return nil
}

func (n *Numbers) submitLater() *river.InsertOpts {
	return &river.InsertOpts{ScheduledAt: n.cfg.Now().Add(submitRetryDelay)}
}

// submitNow submits a campaign the request has just stored. A registry that cannot be reached
// leaves it created for its submit job; only a permanent refusal (carriers.ErrUnsupported) is
// returned.
func (n *Numbers) submitNow(ctx context.Context, id string) error {
	err := n.submit(ctx, id)
	if err != nil && !errors.Is(err, carriers.ErrUnsupported) {
		n.cfg.Logger.Warn("submit a campaign to its registry; its job retries", "id", id, "err", err)
		return nil
	}
	return err
}

// submit hands a created campaign (cpn_…) or toll-free campaign (tfc_…) to its carrier's
// registry and moves it in_review. Anything else (gone, submitted, decided) needs nothing.
func (n *Numbers) submit(ctx context.Context, id string) error {
	st := n.cfg.Store
	if strings.HasPrefix(id, store.PrefixTollFreeCampaign+"_") {
		t, err := st.TollFreeCampaignByID(ctx, id)
		if err != nil || t.Status != store.CampaignCreated {
			return ignoreNotFound(err)
		}
		pn, err := st.GetPhoneNumber(ctx, t.ProjectID, t.PhoneNumberID)
		if err != nil {
			return ignoreNotFound(err)
		}
		reg, err := n.cfg.Carriers.Registry(t.Carrier)
		if err != nil {
			return err
		}
		a, err := st.GetAccount(ctx, t.ProjectID, t.AccountID)
		if err != nil {
			return ignoreNotFound(err)
		}
		brand := brandOf(a)
		optIn, _, help := keywordReplies(brand.Name)
		if err := reg.SubmitTollFreeVerification(ctx, carriers.TollFreeSubmission{
			Reference: t.ID, AccountID: t.AccountID, Brand: brand, PhoneNumber: pn.Number, Description: t.Params.Description,
			UseCases: t.Params.UseCases, MessageSamples: t.Params.MessageSamples, Includes: t.Params.Includes,
			PrivacyPolicyURL: t.Params.PrivacyPolicyURL, TermsAndConditionsURL: t.Params.TermsAndConditionsURL,
			OptInMessage: optIn, HelpMessage: help,
		}); err != nil {
			return err
		}
		_, err = st.TransitionTollFreeCampaign(ctx, id, []string{store.CampaignCreated}, store.CampaignInReview, nil)
		return err
	}
	c, err := st.CampaignByID(ctx, id)
	if err != nil || c.Status != store.CampaignCreated {
		return ignoreNotFound(err)
	}
	reg, err := n.cfg.Carriers.Registry(c.Carrier)
	if err != nil {
		return err
	}
	a, err := st.GetAccount(ctx, c.ProjectID, c.AccountID)
	if err != nil {
		return ignoreNotFound(err)
	}
	p := c.Params
	sub := carriers.CampaignSubmission{Reference: c.ID, AccountID: c.AccountID, Brand: brandOf(a), Description: p.Description,
		UseCases: p.UseCases, MessageSamples: p.MessageSamples, ConsentFlow: p.ConsentFlow, Includes: p.Includes, Volume: p.Volume}
	sub.OptInMessage, sub.OptOutMessage, sub.HelpMessage = keywordReplies(sub.Brand.Name)
	if p.PrivacyPolicyURL != nil {
		sub.PrivacyPolicyURL = *p.PrivacyPolicyURL
	}
	if p.TermsAndConditionsURL != nil {
		sub.TermsAndConditionsURL = *p.TermsAndConditionsURL
	}
	if c.TCRID != nil {
		sub.TCRID = *c.TCRID
	}
	if err := reg.SubmitCampaign(ctx, sub); err != nil {
		return err
	}
	_, err = st.TransitionCampaign(ctx, id, []string{store.CampaignCreated}, store.CampaignInReview, nil)
	return err
}

func ignoreNotFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// submitArgs submits a campaign (cpn_…) or toll-free campaign (tfc_…) that the request could not.
type submitArgs struct {
	ID string `json:"id"`
}

// Kind names the job.
func (submitArgs) Kind() string { return "submit_campaign" }

type submitWorker struct {
	river.WorkerDefaults[submitArgs]
	n *Numbers
}

func (w *submitWorker) Work(ctx context.Context, j *river.Job[submitArgs]) error {
	err := w.n.submit(ctx, j.Args.ID)
	if errors.Is(err, carriers.ErrUnsupported) {
		return river.JobCancel(err) // the registry will never take it
	}
	return err
}
