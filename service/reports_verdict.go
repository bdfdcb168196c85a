package service

import (
	"context"
	"errors"
	"strings"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// verdict applies a registry's decision on a 10DLC campaign (cpn_…) or a toll-free campaign
// (tfc_…) that awaits one, in one transaction. Approval makes it active; a 10DLC campaign then
// emits campaign.approved and completes its pending attachments, each emitting
// phone_number.attached_to_campaign. Rejection records the reason and detaches pending numbers.
// A verdict on anything that does not await one (repeated, late, canceled, unknown, or from a
// carrier other than the campaign's) changes nothing and is no error: carriers report at least
// once, and refusing would only make them report again.
func (r *Reports) verdict(ctx context.Context, carrier string, v *carriers.Verdict) error {
	to, reason := store.CampaignActive, (*string)(nil)
	if !v.Approved {
		to, reason = store.CampaignRejected, &v.Reason
		if v.Reason == "" {
			reason = &[]string{"rejected by the registry"}[0]
		}
	}
	ignored := "the reference is not a campaign id"
	err := r.store.Tx(ctx, func(tx *store.Store) error {
		var registry string // the carrier the campaign is registered with
		switch {
		case strings.HasPrefix(v.Reference, store.PrefixCampaign+"_"):
			c, err := tx.CampaignByID(ctx, v.Reference)
			if err == nil {
				registry = c.Carrier
			}
			if ignored, err = applicable(err, carrier, registry); ignored != "" || err != nil {
				return err
			}
			if moved, err := tx.TransitionCampaign(ctx, c.ID, store.ReviewableStatuses, to, reason); err != nil || !moved {
				return err
			}
			if !v.Approved {
				return tx.DetachPendingNumbers(ctx, c.ID)
			}
			if err := publish(ctx, tx, c.ProjectID, c.AccountID, webhooks.EventCampaignApproved, webhooks.CampaignApproved(c)); err != nil {
				return err
			}
			attached, err := tx.AttachPendingNumbers(ctx, c.ID)
			for i := 0; err == nil && i < len(attached); i++ {
				err = insertAttachedEvent(ctx, tx, &attached[i])
			}
			return err
		case strings.HasPrefix(v.Reference, store.PrefixTollFreeCampaign+"_"):
			t, err := tx.TollFreeCampaignByID(ctx, v.Reference)
			if err == nil {
				registry = t.Carrier
			}
			if ignored, err = applicable(err, carrier, registry); ignored != "" || err != nil {
				return err
			}
			_, err = tx.TransitionTollFreeCampaign(ctx, t.ID, store.ReviewableStatuses, to, reason)
			return err
		}
		return nil
	})
	if err == nil && ignored != "" {
		r.log.Warn("ignored a campaign verdict", "carrier", carrier, "reference", v.Reference, "why", ignored)
	}
	return err
}

// applicable says why a verdict from carrier does not apply to the campaign whose lookup failed
// with err or found it registered with registry; a lookup failure other than not found is returned.
func applicable(err error, carrier, registry string) (string, error) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "no such campaign", nil
	case err != nil:
		return "", err
	case registry != carrier:
		return "the campaign is registered with the " + registry + " carrier", nil
	}
	return "", nil
}
