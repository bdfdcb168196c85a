package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/store"
)

// PrefixBrandVerification is the TypeID prefix of a brand verification message request.
const PrefixBrandVerification = "bvm"

// ResendBrandVerification asks the registry that reviews an account's campaign to text the sole
// proprietor's mobile number its brand verification code again (Surge's POST
// /accounts/{id}/brand_verification_messages). The request is a job, enqueued here and sent by a
// worker; it answers the request's reference. It needs a sole proprietor organization with a
// mobile number and a campaign the registry has yet to decide (409 conflict otherwise), and a
// registry that can send such codes (422 carrier_unsupported otherwise).
func (n *Numbers) ResendBrandVerification(ctx context.Context, projectID, accountID string) (string, error) {
	a, err := n.cfg.Store.GetAccount(ctx, projectID, accountID)
	if err != nil {
		return "", err
	}
	if a.ArchivedAt != nil {
		return "", archived(a)
	}
	var org Organization
	if err := json.Unmarshal([]byte(a.Organization), &org); err != nil {
		return "", fmt.Errorf("service: decode organization of %s: %w", a.ID, err)
	}
	if org.Type == nil || *org.Type != "sole_proprietor" || org.MobileNumber == nil || *org.MobileNumber == "" {
		return "", Errorf(TypeConflict, "brand verification codes are for sole proprietors: the account's organization needs type sole_proprietor and a mobile_number")
	}
	c, err := n.cfg.Store.CampaignUnderReview(ctx, a.ID)
	if errors.Is(err, store.ErrNotFound) {
		return "", Errorf(TypeConflict, "the account's brand is not awaiting verification: it has no campaign under review")
	}
	if err != nil {
		return "", err
	}
	if _, err := n.cfg.Carriers.BrandVerifier(c.Carrier); err != nil {
		return "", err
	}
	ref := store.NewID(PrefixBrandVerification)
	args := brandVerificationArgs{Reference: ref, AccountID: a.ID, CampaignID: c.ID, Carrier: c.Carrier, MobileNumber: *org.MobileNumber}
	if err := n.cfg.Store.InsertJob(ctx, args, nil); err != nil {
		return "", err
	}
	return ref, nil
}

// brandVerificationArgs is the job that asks a registry for a brand verification code.
type brandVerificationArgs struct {
	Reference    string `json:"reference"`
	AccountID    string `json:"account_id"`
	CampaignID   string `json:"campaign_id"`
	Carrier      string `json:"carrier"`
	MobileNumber string `json:"mobile_number"`
}

// Kind names the job.
func (brandVerificationArgs) Kind() string { return "brand_verification_send" }

type brandVerificationWorker struct {
	river.WorkerDefaults[brandVerificationArgs]
	n *Numbers
}

// Work asks the campaign's registry for the code, under the request's reference so that a retried
// job does not text twice. A campaign decided meanwhile needs no code any more.
func (w *brandVerificationWorker) Work(ctx context.Context, j *river.Job[brandVerificationArgs]) error {
	c, err := w.n.cfg.Store.CampaignByID(ctx, j.Args.CampaignID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if c.Status != store.CampaignCreated && c.Status != store.CampaignInReview {
		return nil
	}
	bv, err := w.n.cfg.Carriers.BrandVerifier(j.Args.Carrier)
	if err != nil {
		w.n.cfg.Logger.Warn("brand verification code not sent", "reference", j.Args.Reference, "err", err)
		return nil
	}
	return bv.SendBrandVerification(ctx, carriers.BrandVerification{Reference: j.Args.Reference, AccountID: j.Args.AccountID,
		CampaignID: j.Args.CampaignID, MobileNumber: j.Args.MobileNumber})
}
