package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// Operator is what an installation's operators do to projects, API keys and webhook endpoints,
// from the console or the command line alike: both call these operations, which check that what
// they act on belongs to the project named (the command line, acting for the whole
// installation, names none) and record every change in the audit log, in the change's
// transaction where the change is the operator's own.
type Operator struct {
	store    *store.Store
	webhooks *webhooks.Service
	reports  *Reports
	now      func() time.Time
	audit    auditLog
}

// NewOperator returns the operator operations over a store, the webhook service and the
// carriers' reports (through which simulated reviews are decided).
func NewOperator(st *store.Store, wh *webhooks.Service, reports *Reports, now func() time.Time) (*Operator, error) {
	if st == nil || wh == nil || reports == nil {
		return nil, errors.New("service: NewOperator needs a store, the webhook service and the reports")
	}
	if now == nil {
		now = time.Now
	}
	return &Operator{store: st, webhooks: wh, reports: reports, now: now, audit: auditLog{now: now}}, nil
}

// Record writes an audit entry for a change made elsewhere (the console's calls of the public
// API's operations).
func (o *Operator) Record(ctx context.Context, a Actor, projectID, action, target string, detail map[string]any) error {
	return o.audit.record(ctx, o.store, a, projectID, action, target, detail)
}

// Audit lists one page of a project's audit log, newest first.
func (o *Operator) Audit(ctx context.Context, projectID string, p store.Page) ([]store.AuditEntry, store.Cursors, error) {
	return o.store.ListAudit(ctx, projectID, p)
}

// --- Projects --------------------------------------------------------------------------

// CreateProject creates a project. A console user may create one when they own a project
// already (a viewer or developer elsewhere may not: a project mints keys that send on the
// installation's carriers), and becomes its owner.
func (o *Operator) CreateProject(ctx context.Context, a Actor, name string) (*store.Project, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 100 {
		return nil, Invalid("name", "must be 1 to 100 characters")
	}
	if a.UserID != "" {
		ms, err := o.store.Memberships(ctx, a.UserID)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(ms, func(m store.Membership) bool { return m.Role == store.RoleOwner }) {
			return nil, &Error{Type: TypeForbidden, Message: "Only an owner of a project may create projects."}
		}
	}
	var p *store.Project
	err := o.store.Tx(ctx, func(tx *store.Store) error {
		var err error
		if p, err = tx.CreateProject(ctx, name); err != nil {
			return err
		}
		if a.UserID != "" {
			if err := tx.SetMember(ctx, &store.ConsoleMember{ProjectID: p.ID, UserID: a.UserID, Role: store.RoleOwner,
				CreatedAt: p.CreatedAt}); err != nil {
				return err
			}
		}
		return o.audit.record(ctx, tx, a, p.ID, "project.create", p.ID, map[string]any{"name": name})
	})
	return p, err
}

// Projects lists every project of the installation, newest first (the command line's view).
func (o *Operator) Projects(ctx context.Context) ([]store.Project, error) {
	return o.store.ListProjects(ctx)
}

// Project returns one project.
func (o *Operator) Project(ctx context.Context, id string) (*store.Project, error) {
	return o.store.GetProject(ctx, id)
}

// SetProjectLocked locks or unlocks a project: a locked project's keys get 403 platform_locked.
func (o *Operator) SetProjectLocked(ctx context.Context, a Actor, id string, locked bool) (*store.Project, error) {
	var p *store.Project
	err := o.store.Tx(ctx, func(tx *store.Store) error {
		var err error
		if p, err = tx.SetProjectLocked(ctx, id, locked); err != nil {
			return err
		}
		action := "project.unlock"
		if locked {
			action = "project.lock"
		}
		return o.audit.record(ctx, tx, a, id, action, id, nil)
	})
	return p, err
}

// --- API keys --------------------------------------------------------------------------

// CreateKey mints a live (or demo) key for a project and returns it with its secret, which is
// not stored and cannot be shown again.
func (o *Operator) CreateKey(ctx context.Context, a Actor, projectID string, demo bool) (*store.APIKey, string, error) {
	var (
		k      *store.APIKey
		secret string
	)
	err := o.store.Tx(ctx, func(tx *store.Store) error {
		var err error
		if k, secret, err = tx.CreateAPIKey(ctx, projectID, demo); err != nil {
			return err
		}
		return o.audit.record(ctx, tx, a, projectID, "api_key.create", k.ID, map[string]any{"kind": k.Kind, "hint": k.Hint})
	})
	return k, secret, err
}

// Keys lists a project's keys, newest first, revoked ones included, with their last use.
func (o *Operator) Keys(ctx context.Context, projectID string) ([]store.APIKeyUse, error) {
	if _, err := o.store.GetProject(ctx, projectID); err != nil {
		return nil, err
	}
	return o.store.ListAPIKeyUses(ctx, projectID)
}

// RevokeKey revokes a key at once (revoking twice keeps the first time). projectID is the
// project it must belong to; empty accepts any project's key (the command line).
func (o *Operator) RevokeKey(ctx context.Context, a Actor, projectID, id string) (*store.APIKey, error) {
	var k *store.APIKey
	err := o.store.Tx(ctx, func(tx *store.Store) error {
		var err error
		if projectID != "" {
			if _, err := tx.GetAPIKey(ctx, projectID, id); err != nil {
				return err
			}
		}
		if k, err = tx.RevokeAPIKey(ctx, id); err != nil {
			return err
		}
		return o.audit.record(ctx, tx, a, k.ProjectID, "api_key.revoke", k.ID, map[string]any{"kind": k.Kind, "hint": k.Hint})
	})
	return k, err
}

// --- API logs --------------------------------------------------------------------------

// APILogQuery is a listing of the API log as operators write it; zero fields do not filter.
type APILogQuery struct {
	// Status is an exact status ("404") or a class ("2xx", "4xx", "5xx").
	Status string
	// Path keeps requests whose path contains it.
	Path   string
	Method string
	KeyID  string
	From   *time.Time
	To     *time.Time
}

// APILogs lists one page of a project's API log, newest first.
func (o *Operator) APILogs(ctx context.Context, projectID string, q APILogQuery, p store.Page) ([]store.APILog, store.Cursors, error) {
	f := store.APILogFilter{Path: q.Path, Method: q.Method, KeyID: q.KeyID, From: q.From, To: q.To}
	if s := strings.ToLower(strings.TrimSpace(q.Status)); s != "" {
		if len(s) == 3 && strings.HasSuffix(s, "xx") && s[0] >= '1' && s[0] <= '5' {
			f.StatusMin = int(s[0]-'0') * 100
			f.StatusMax = f.StatusMin + 99
		} else if n, err := strconv.Atoi(s); err == nil && n >= 100 && n <= 599 {
			f.StatusMin, f.StatusMax = n, n
		} else {
			return nil, store.Cursors{}, Invalid("status", "is neither a status code nor a class such as 4xx")
		}
	}
	return o.store.ListAPILogPage(ctx, projectID, f, p)
}

// APILog returns one request of a project's API log.
func (o *Operator) APILog(ctx context.Context, projectID string, id int64) (*store.APILog, error) {
	return o.store.GetAPILog(ctx, projectID, id)
}

// --- Webhooks --------------------------------------------------------------------------

// endpoint returns an endpoint, checking it belongs to projectID unless that is empty.
func (o *Operator) endpoint(ctx context.Context, projectID, id string) (*store.WebhookEndpoint, error) {
	e, err := o.store.GetWebhookEndpoint(ctx, id)
	if err != nil {
		return nil, err
	}
	if projectID != "" && e.ProjectID != projectID {
		return nil, fmt.Errorf("webhook endpoint %s: %w", id, store.ErrNotFound)
	}
	return e, nil
}

// SetWebhook adds the project's endpoint for url, or updates the events of the one it has (see
// webhooks.Service.SetEndpoint). The result holds the signing secret.
func (o *Operator) SetWebhook(ctx context.Context, a Actor, projectID, url string, events []string) (*store.WebhookEndpoint, error) {
	e, err := o.webhooks.SetEndpoint(ctx, projectID, url, events)
	if err != nil {
		return nil, err
	}
	return e, o.Record(ctx, a, projectID, "webhook.set", e.ID, map[string]any{"url": e.URL, "events": e.EventTypes()})
}

// Webhooks lists a project's endpoints, newest first.
func (o *Operator) Webhooks(ctx context.Context, projectID string) ([]store.WebhookEndpoint, error) {
	return o.webhooks.Endpoints(ctx, projectID)
}

// RotateWebhookSecret gives an endpoint a new secret; the previous one signs beside it for
// webhooks.SecretGrace.
func (o *Operator) RotateWebhookSecret(ctx context.Context, a Actor, projectID, id string) (*store.WebhookEndpoint, error) {
	if _, err := o.endpoint(ctx, projectID, id); err != nil {
		return nil, err
	}
	e, err := o.webhooks.RotateSecret(ctx, id)
	if err != nil {
		return nil, err
	}
	return e, o.Record(ctx, a, e.ProjectID, "webhook.rotate_secret", id, map[string]any{"previous_secret_valid_until": e.PreviousSecretUntil})
}

// SetWebhookEnabled enables or disables an endpoint.
func (o *Operator) SetWebhookEnabled(ctx context.Context, a Actor, projectID, id string, enabled bool) (*store.WebhookEndpoint, error) {
	if _, err := o.endpoint(ctx, projectID, id); err != nil {
		return nil, err
	}
	e, err := o.webhooks.SetEnabled(ctx, id, enabled)
	if err != nil {
		return nil, err
	}
	action := "webhook.disable"
	if enabled {
		action = "webhook.enable"
	}
	return e, o.Record(ctx, a, e.ProjectID, action, id, nil)
}

// DeliveriesFailing selects, in WebhookDeliveries, the deliveries whose last attempt failed:
// failed for good, or pending a retry.
const DeliveriesFailing = "failing"

// WebhookDeliveries lists a project's most recent deliveries (at most limit, default 50), newest
// first, only those in status when it is not empty: pending, succeeded, failed, or
// DeliveriesFailing.
func (o *Operator) WebhookDeliveries(ctx context.Context, projectID, status string, limit int) ([]store.WebhookDelivery, error) {
	if limit <= 0 {
		limit = 50
	}
	switch status {
	case DeliveriesFailing:
		return o.webhooks.Deliveries(ctx, projectID, true, limit)
	case "", store.DeliveryPending, store.DeliverySucceeded, store.DeliveryFailed:
		return o.store.ListWebhookDeliveries(ctx, projectID, status, limit)
	}
	return nil, Invalid("status", "must be pending, succeeded, failed or failing")
}

// WebhookDelivery returns one of a project's deliveries with its endpoint and event.
func (o *Operator) WebhookDelivery(ctx context.Context, projectID, id string) (*store.DeliveryWork, error) {
	d, err := o.store.GetWebhookDelivery(ctx, id)
	if err != nil {
		return nil, err
	}
	if d.ProjectID != projectID {
		return nil, fmt.Errorf("webhook delivery %s: %w", id, store.ErrNotFound)
	}
	e, err := o.store.GetWebhookEndpoint(ctx, d.EndpointID)
	if err != nil {
		return nil, err
	}
	ev, err := o.store.GetEvent(ctx, d.EventID)
	if err != nil {
		return nil, err
	}
	return &store.DeliveryWork{Delivery: *d, Endpoint: *e, Event: *ev}, nil
}

// WebhookSecret returns an endpoint's signing secret, for an operator to configure a receiver;
// the reading is audited.
func (o *Operator) WebhookSecret(ctx context.Context, a Actor, projectID, id string) (*store.WebhookEndpoint, error) {
	e, err := o.endpoint(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	return e, o.Record(ctx, a, e.ProjectID, "webhook.reveal_secret", id, nil)
}

// ReplayWebhook delivers a delivery's (whd_…) or an event's (evt_…) payload again (see
// webhooks.Service.Replay); projectID, when not empty, is the project it must belong to.
func (o *Operator) ReplayWebhook(ctx context.Context, a Actor, projectID, id string) ([]store.WebhookDelivery, error) {
	owner := ""
	switch {
	case strings.HasPrefix(id, store.PrefixWebhookDelivery+"_"):
		d, err := o.store.GetWebhookDelivery(ctx, id)
		if err != nil {
			return nil, err
		}
		owner = d.ProjectID
	case strings.HasPrefix(id, store.PrefixEvent+"_"):
		ev, err := o.store.GetEvent(ctx, id)
		if err != nil {
			return nil, err
		}
		owner = ev.ProjectID
	}
	if projectID != "" && owner != "" && owner != projectID {
		return nil, fmt.Errorf("replay %s: %w", id, store.ErrNotFound)
	}
	ds, err := o.webhooks.Replay(ctx, id)
	if err != nil {
		return nil, err
	}
	return ds, o.Record(ctx, a, owner, "webhook.replay", id, map[string]any{"deliveries": len(ds)})
}

// ReplayWebhooksSince replays a project's failed deliveries of events since a time.
func (o *Operator) ReplayWebhooksSince(ctx context.Context, a Actor, projectID string, since time.Time) ([]store.WebhookDelivery, error) {
	if _, err := o.store.GetProject(ctx, projectID); err != nil {
		return nil, err
	}
	ds, err := o.webhooks.ReplaySince(ctx, projectID, since)
	if err != nil {
		return nil, err
	}
	return ds, o.Record(ctx, a, projectID, "webhook.replay_failed", projectID,
		map[string]any{"since": since.UTC().Format(time.RFC3339), "deliveries": len(ds)})
}

// SendTestWebhook delivers a test event of type typ (empty: the first type the endpoint is
// subscribed to) to one endpoint only, signed and retried like any other. Its data is a sample
// of the type's schema whose ids are all zeros (acct_000…, msg_000…), so receivers can tell it
// from a real event.
func (o *Operator) SendTestWebhook(ctx context.Context, a Actor, projectID, endpointID, typ string) (*store.WebhookDelivery, error) {
	e, err := o.endpoint(ctx, projectID, endpointID)
	if err != nil {
		return nil, err
	}
	if typ == "" {
		typ = webhooks.EventMessageReceived
		if types := e.EventTypes(); len(types) > 0 {
			typ = types[0]
		}
	}
	ev, err := webhooks.SampleEvent(e.ProjectID, typ, o.now().UTC().Truncate(time.Second))
	if err != nil {
		return nil, err
	}
	if !e.Enabled {
		return nil, Errorf(TypeConflict, "endpoint %s is disabled: enable it before sending a test event", e.ID)
	}
	var d *store.WebhookDelivery
	err = o.store.Tx(ctx, func(tx *store.Store) error {
		var err error
		if d, err = webhooks.PublishSample(ctx, tx, &ev, e.ID); err != nil {
			return err
		}
		return o.audit.record(ctx, tx, a, e.ProjectID, "webhook.test", e.ID, map[string]any{"event_type": typ, "event_id": ev.ID})
	})
	return d, err
}

// --- The simulated carrier's reviews ----------------------------------------------------

// SimVerdict decides a 10DLC campaign's (cpn_…) or toll-free verification's (tfc_…) review by the
// simulated carrier, reporting the verdict through the same path as the simulated registry: a
// campaign that is not under the simulator's review is left as it is (before == after). A
// rejection without a reason is "rejected by the operator". projectID, when not empty, is the
// project the campaign must belong to. A change is audited.
func (o *Operator) SimVerdict(ctx context.Context, a Actor, projectID, id string, approve bool, reason string) (before, after string, err error) {
	owner := ""
	status := func() (string, error) {
		switch {
		case strings.HasPrefix(id, store.PrefixCampaign+"_"):
			c, err := o.store.CampaignByID(ctx, id)
			if err != nil {
				return "", err
			}
			owner = c.ProjectID
			return c.Status, nil
		case strings.HasPrefix(id, store.PrefixTollFreeCampaign+"_"):
			t, err := o.store.TollFreeCampaignByID(ctx, id)
			if err != nil {
				return "", err
			}
			owner = t.ProjectID
			return t.Status, nil
		}
		return "", Invalid("id", "is neither a campaign (cpn_…) nor a toll-free campaign (tfc_…) id")
	}
	if before, err = status(); err != nil {
		return "", "", err
	}
	if projectID != "" && owner != projectID {
		return "", "", fmt.Errorf("campaign %s: %w", id, store.ErrNotFound)
	}
	v := &carriers.Verdict{Reference: id, Approved: approve}
	if !approve {
		if v.Reason = strings.TrimSpace(reason); v.Reason == "" {
			v.Reason = "rejected by the operator"
		}
	}
	if err := o.reports.Report(ctx, carriers.Report{Carrier: sim.Name, Verdict: v}); err != nil {
		return "", "", err
	}
	if after, err = status(); err != nil {
		return "", "", err
	}
	if after != before {
		action := "sim.reject"
		if approve {
			action = "sim.approve"
		}
		err = o.Record(ctx, a, owner, action, id, map[string]any{"from": before, "to": after, "reason": v.Reason})
	}
	return before, after, err
}

// --- Accounts --------------------------------------------------------------------------

// AccountReview is what operators see of an account beyond the public API: whether it is
// archived, and its 10DLC campaigns and toll-free verifications with their rejection reasons.
type AccountReview struct {
	Account   *store.Account
	Campaigns []store.Campaign
	// TollFree are the verifications, each with its number (E.164) in Numbers.
	TollFree []store.TollFreeCampaign
	Numbers  map[string]string
}

// ReviewAccount returns an account's review: its latest 100 campaigns of each kind.
func (o *Operator) ReviewAccount(ctx context.Context, projectID, accountID string) (*AccountReview, error) {
	a, err := o.store.GetAccount(ctx, projectID, accountID)
	if err != nil {
		return nil, err
	}
	r := &AccountReview{Account: a, Numbers: map[string]string{}}
	if r.Campaigns, _, err = o.store.ListCampaigns(ctx, projectID, accountID, store.Page{Limit: 100}); err != nil {
		return nil, err
	}
	if r.TollFree, _, err = o.store.ListTollFreeCampaigns(ctx, projectID, accountID, store.Page{Limit: 100}); err != nil {
		return nil, err
	}
	for _, t := range r.TollFree {
		if _, ok := r.Numbers[t.PhoneNumberID]; ok {
			continue
		}
		n, err := o.store.GetPhoneNumber(ctx, projectID, t.PhoneNumberID)
		if err != nil {
			return nil, err
		}
		r.Numbers[t.PhoneNumberID] = n.Number
	}
	return r, nil
}
