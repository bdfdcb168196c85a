package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/nyaruka/phonenumbers"
	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/store"
)

// NumbersConfig wires the Numbers service.
type NumbersConfig struct {
	// Store and Carriers are required.
	Store    *store.Store
	Carriers *Carriers
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Numbers buys, attaches and releases phone numbers, and registers 10DLC campaigns and toll-free
// verifications, through the carriers' NumberInventory and CampaignRegistry. The registries'
// verdicts come back through Reports.
type Numbers struct {
	cfg NumbersConfig
}

// NewNumbers returns the Numbers service.
func NewNumbers(cfg NumbersConfig) (*Numbers, error) {
	if cfg.Store == nil || cfg.Carriers == nil {
		return nil, errors.New("service: NewNumbers needs Store and Carriers")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Numbers{cfg: cfg}, nil
}

// Register adds the service's job workers: giving numbers back to their carriers, and submitting
// campaigns to the registries.
func (n *Numbers) Register(w *river.Workers) {
	river.AddWorker(w, &releaseNumberWorker{n: n})
	river.AddWorker(w, &submitWorker{n: n})
	river.AddWorker(w, &withdrawWorker{n: n})
	river.AddWorker(w, &assignNumberWorker{n: n})
	river.AddWorker(w, &brandVerificationWorker{n: n})
}

// Error types of numbers.
const (
	TypeNumberNotAvailable = "number_not_available"
	TypeShortCodePurchase  = "short_code_not_purchasable"
)

const (
	// defaultSearchLimit caps a search without a limit, like the API's lists.
	defaultSearchLimit = 25
	// purchaseCandidates is how many searched numbers a purchase without an exact number tries.
	purchaseCandidates = 5
	// purchaseGuardDelay is when a purchase's guard job checks that its number was recorded; far
	// longer than any request lasts.
	purchaseGuardDelay = 10 * time.Minute
)

// NumberSearch selects purchasable numbers.
type NumberSearch struct {
	// Type is "local" or "toll_free".
	Type string
	// Country is "US" (the default, except near a place: either) or "CA".
	Country string
	// AreaCode narrows local numbers to an area code, toll-free ones to a prefix.
	AreaCode string
	// Near orders local numbers nearest to a place first.
	Near *carriers.Location
	// Limit caps the answer. Defaults to 25.
	Limit int
	// Carrier names the carrier to search. Defaults to the installation's default carrier.
	Carrier string
	// Offset skips that many of the search's numbers: a page of the search. The window a search
	// pages through is the first MaxAvailableWindow numbers.
	Offset int
}

// MaxAvailableWindow is how far into a number search pages reach: the carrier is asked for at
// most this many numbers at once (Twilio's largest page).
const MaxAvailableWindow = 1000

// Purchase says which number to buy: exactly Number, or the first available one of Type in
// AreaCode and Country (default US), or the nearest available one to Latitude and Longitude
// (given together; either country unless Country says). Without Type, a toll-free prefix as
// AreaCode means toll_free, anything else local.
type Purchase struct {
	Number, AreaCode, Type, Country string
	Latitude, Longitude             *float64
	// Carrier names the carrier to buy from. Defaults to the installation's default carrier.
	Carrier string
	// Name defaults to the number in its national format, "(415) 555-0100".
	Name *string
}

// tollFreePrefixes are the area codes of toll-free numbers: a purchase by one of them without a
// type is a toll-free purchase (800, which only port-in brings, included, to be refused as such).
var tollFreePrefixes = []string{"800", "833", "844", "855", "866", "877", "888"}

// near checks a purchase's place and infers its type: latitude and longitude come together and
// select local numbers.
func (p *Purchase) near() (*carriers.Location, error) {
	switch {
	case p.Latitude == nil && p.Longitude == nil:
		if p.Type == "" && slices.Contains(tollFreePrefixes, p.AreaCode) {
			p.Type = store.NumberTollFree
		}
		return nil, nil
	case p.Longitude == nil:
		return nil, Invalid("longitude", "is required with latitude")
	case p.Latitude == nil:
		return nil, Invalid("latitude", "is required with longitude")
	case p.Number != "":
		return nil, Invalid("latitude", "cannot be combined with phone_number")
	case p.Type == store.NumberTollFree:
		return nil, Invalid("latitude", "selects local numbers; toll-free numbers have no place")
	}
	p.Type = store.NumberLocal
	return &carriers.Location{Latitude: *p.Latitude, Longitude: *p.Longitude}, nil
}

// NumberPatch changes a number; nil fields are left alone.
type NumberPatch struct {
	Name *string
	// Metadata replaces the number's metadata.
	Metadata store.Metadata
	// CampaignID attaches a US local number to a 10DLC campaign of its account.
	CampaignID *string
}

// Available lists a page of the numbers the account could buy from a carrier (the default one
// unless q names it), and whether more follow. Numbers the installation holds (through any carrier) are never offered.
// The carrier is searched afresh for every page, so a page may repeat or skip a number that was
// bought or released in between.
func (n *Numbers) Available(ctx context.Context, projectID, accountID string, q NumberSearch) ([]carriers.AvailableNumber, bool, error) {
	if _, err := n.cfg.Store.GetAccount(ctx, projectID, accountID); err != nil {
		return nil, false, err
	}
	inv, err := n.inventory(q.Carrier)
	if err != nil {
		return nil, false, err
	}
	if q.Limit <= 0 {
		q.Limit = defaultSearchLimit
	}
	page := q.Limit
	q.Offset = max(q.Offset, 0)
	q.Limit = min(q.Offset+page+1, MaxAvailableWindow)
	found, err := n.search(ctx, inv, q)
	if err != nil {
		return nil, false, err
	}
	if q.Offset >= len(found) {
		return []carriers.AvailableNumber{}, false, nil
	}
	end := min(q.Offset+page, len(found))
	return found[q.Offset:end], len(found) > end, nil
}

func (n *Numbers) search(ctx context.Context, inv carriers.NumberInventory, q NumberSearch) ([]carriers.AvailableNumber, error) {
	if q.Country == "" && q.Near == nil {
		q.Country = "US"
	}
	if q.Limit <= 0 {
		q.Limit = defaultSearchLimit
	}
	found, err := inv.SearchNumbers(ctx, carriers.NumberQuery{Country: q.Country, Type: q.Type, AreaCode: q.AreaCode,
		Near: q.Near, Limit: q.Limit})
	if err != nil {
		return nil, inventoryError(err, "")
	}
	numbers := make([]string, len(found))
	for i, a := range found {
		numbers[i] = a.Number
	}
	held, err := n.cfg.Store.HeldAmong(ctx, numbers)
	if err != nil {
		return nil, err
	}
	out := []carriers.AvailableNumber{}
	for _, a := range found {
		if !held[a.Number] {
			out = append(out, a)
		}
	}
	return out, nil
}

// Purchase buys a number for an account from the default carrier.
//
// Buying is a carrier call (ProvisionNumber) and an insert, which cannot share a transaction: the
// carrier is a remote system, no transaction should wait on one, and the simulated carrier writes
// through a connection of its own, which a SQLite transaction held across the call would block.
// So the carrier call comes first and is undone (ReleaseNumber) when the insert fails. A crash
// between the two is covered by a release_number job enqueued before the call and due
// purchaseGuardDelay later: it gives the number back unless a phone number row then holds it.
func (n *Numbers) Purchase(ctx context.Context, projectID, accountID string, p Purchase) (*store.PhoneNumber, error) {
	if p.Type == store.NumberShortCode {
		return nil, Errorf(TypeShortCodePurchase, "short codes cannot be purchased through the API; the operator provisions them")
	}
	near, err := p.near()
	if err != nil {
		return nil, err
	}
	a, err := n.cfg.Store.GetAccount(ctx, projectID, accountID)
	if err != nil {
		return nil, err
	}
	if a.ArchivedAt != nil {
		return nil, archived(a)
	}
	inv, err := n.inventory(p.Carrier)
	if err != nil {
		return nil, err
	}
	candidates, err := n.candidates(ctx, inv, p, near)
	if err != nil {
		return nil, err
	}
	for _, c := range candidates {
		pn, err := n.buy(ctx, inv, a, c, p.Name)
		if errors.Is(err, carriers.ErrNumberUnavailable) && p.Number == "" {
			continue // taken since the search: try the next one
		}
		if err != nil {
			return nil, inventoryError(err, p.Number)
		}
		return pn, nil
	}
	typ := p.Type
	if typ == "" {
		typ = store.NumberLocal
	}
	where := ""
	switch {
	case p.AreaCode != "":
		where = " in area code " + p.AreaCode
	case near != nil:
		where = " near that place"
	}
	return nil, Errorf(TypeNumberNotAvailable, "no %s number is available%s", typeWords(typ), where)
}

// inventory is the number inventory of the named carrier (the default one when name is empty); a
// carrier the installation does not run is a validation error on carrier.
func (n *Numbers) inventory(name string) (carriers.NumberInventory, error) {
	if err := n.knownCarrier(name); err != nil {
		return nil, err
	}
	return n.cfg.Carriers.Inventory(name)
}

// knownCarrier refuses the name of a carrier the installation does not run.
func (n *Numbers) knownCarrier(name string) error {
	if _, err := n.cfg.Carriers.Get(name); err != nil {
		return Invalid("carrier", "is not a carrier of this installation")
	}
	return nil
}

// candidates are the numbers a purchase may take, best first.
func (n *Numbers) candidates(ctx context.Context, inv carriers.NumberInventory, p Purchase, near *carriers.Location) ([]carriers.AvailableNumber, error) {
	if p.Number == "" {
		if p.Type == "" {
			p.Type = store.NumberLocal
		}
		return n.search(ctx, inv, NumberSearch{Type: p.Type, Country: p.Country, AreaCode: p.AreaCode, Near: near, Limit: purchaseCandidates})
	}
	if p.AreaCode != "" {
		return nil, Invalid("area_code", "cannot be combined with phone_number")
	}
	typ, country, ok := classifyNumber(p.Number)
	switch {
	case !ok:
		return nil, Errorf(TypeNumberNotAvailable, "%s is not a US or Canadian local or toll-free number", p.Number)
	case p.Type != "" && p.Type != typ:
		return nil, Invalid("type", "does not match phone_number, which is a "+typeWords(typ)+" number")
	case typ == store.NumberLocal && p.Country != "" && p.Country != country:
		return nil, Errorf(TypeNumberNotAvailable, "%s is a number of %s, not of %s", p.Number, country, p.Country)
	case typ == store.NumberTollFree:
		// Toll-free numbers serve the whole North American plan; they count as the buyer's country.
		country = p.Country
		if country == "" {
			country = "US"
		}
	}
	if _, err := n.cfg.Store.HeldNumber(ctx, p.Number); err == nil {
		return nil, Errorf(TypeNumberNotAvailable, "%s is not available", p.Number)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	return []carriers.AvailableNumber{{Number: p.Number, Country: country, Type: typ}}, nil
}

// buy provisions one number and records it for the account; see Purchase.
func (n *Numbers) buy(ctx context.Context, inv carriers.NumberInventory, a *store.Account, c carriers.AvailableNumber, name *string) (*store.PhoneNumber, error) {
	guard := &river.InsertOpts{ScheduledAt: n.cfg.Now().Add(purchaseGuardDelay)}
	if err := n.cfg.Store.InsertJob(ctx, releaseNumberArgs{Carrier: inv.Name(), Number: c.Number}, guard); err != nil {
		return nil, err
	}
	if err := inv.ProvisionNumber(ctx, c.Number); err != nil {
		return nil, err
	}
	if name == nil {
		formatted := nationalFormat(c.Number)
		name = &formatted
	}
	pn := &store.PhoneNumber{
		ProjectID: a.ProjectID, AccountID: &a.ID, Number: c.Number, Type: c.Type, Country: c.Country, Name: name,
		Carrier: inv.Name(),
	}
	err := n.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		if err := lockActiveAccount(ctx, tx, a.ProjectID, a.ID); err != nil {
			return err
		}
		return tx.InsertPhoneNumber(ctx, pn)
	})
	if err != nil {
		// Undo the carrier call now rather than when the guard runs, so the number is offered again.
		if rerr := inv.ReleaseNumber(context.WithoutCancel(ctx), c.Number); rerr != nil {
			n.cfg.Logger.Warn("give back a number whose purchase failed; the guard job retries", "number", c.Number, "err", rerr)
		}
		if errors.Is(err, store.ErrDuplicate) {
			return nil, fmt.Errorf("%s is held already: %w", c.Number, carriers.ErrNumberUnavailable)
		}
		return nil, err
	}
	return pn, nil
}

// UpdateNumber renames a number, replaces its metadata and/or attaches it to a 10DLC campaign of
// its account: the
// attachment is pending until the campaign is active (at once when it already is), and becoming
// attached emits phone_number.attached_to_campaign in the same transaction.
func (n *Numbers) UpdateNumber(ctx context.Context, projectID, id string, patch NumberPatch) (*store.PhoneNumber, error) {
	var out *store.PhoneNumber
	err := n.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		// The campaign is locked before the number (see ArchiveAccount).
		var c *store.Campaign
		if patch.CampaignID != nil {
			var err error
			if c, err = tx.GetCampaign(ctx, projectID, *patch.CampaignID); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		pn, err := tx.GetPhoneNumber(ctx, projectID, id)
		if err != nil {
			return err
		}
		if patch.Name != nil {
			pn.Name = patch.Name
		}
		if patch.Metadata != nil {
			pn.Metadata = patch.Metadata
		}
		attached := false
		previous := pn.CampaignID
		if patch.CampaignID != nil {
			if attached, err = attach(pn, c); err != nil {
				return err
			}
		}
		if err := tx.UpdatePhoneNumber(ctx, pn); err != nil {
			return err
		}
		if patch.CampaignID != nil && (previous == nil || *previous != c.ID) {
			if err := n.assignLater(ctx, tx, pn, previous, &c.ID); err != nil {
				return err
			}
		}
		if attached {
			if err := insertAttachedEvent(ctx, tx, pn); err != nil {
				return err
			}
		}
		out = pn
		return nil
	})
	return out, err
}

// attach points a number at a campaign (nil when it does not exist) and reports whether the
// number has just become attached. Repeating an attachment changes nothing.
func attach(pn *store.PhoneNumber, c *store.Campaign) (bool, error) {
	if pn.Type != store.NumberLocal || pn.Country != "US" {
		return false, Invalid("campaign_id", "can be set only on a US local number (a toll-free number is verified with a toll-free campaign)")
	}
	if c == nil || pn.AccountID == nil || c.AccountID != *pn.AccountID {
		return false, Invalid("campaign_id", "is not a campaign of the phone number's account")
	}
	if c.Carrier != pn.Carrier {
		return false, Invalid("campaign_id", fmt.Sprintf("is registered with the %s carrier, which does not provide this number", c.Carrier))
	}
	status := store.AttachmentPending
	switch c.Status {
	case store.CampaignActive:
		status = store.AttachmentDone
	case store.CampaignRejected, store.CampaignDeactivated:
		return false, Invalid("campaign_id", "is "+c.Status+" and cannot take numbers")
	}
	if pn.CampaignID != nil && *pn.CampaignID == c.ID && pn.AttachmentStatus != nil && *pn.AttachmentStatus == status {
		return false, nil
	}
	pn.CampaignID, pn.AttachmentStatus = &c.ID, &status
	return status == store.AttachmentDone, nil
}

// Release gives a number back: it disappears from the API at once, its toll-free campaigns are
// canceled (and withdrawn at their carrier), and a job releases it at the carrier after the commit.
func (n *Numbers) Release(ctx context.Context, projectID, id string) (*store.PhoneNumber, error) {
	var out *store.PhoneNumber
	err := n.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		pn, err := tx.GetPhoneNumber(ctx, projectID, id)
		if err != nil {
			return err
		}
		if err := tx.ReleasePhoneNumber(ctx, pn); err != nil {
			return err
		}
		canceled, err := tx.CancelNumberTollFreeCampaigns(ctx, pn.ID)
		if err != nil {
			return err
		}
		out = pn
		if err := n.assignLater(ctx, tx, pn, pn.CampaignID, nil); err != nil {
			return err
		}
		jobs := []river.InsertManyParams{{Args: releaseNumberArgs{Carrier: pn.Carrier, Number: pn.Number}}}
		for _, t := range canceled {
			jobs = append(jobs, river.InsertManyParams{Args: withdrawArgs{Carrier: t.Carrier, Reference: t.ID}})
		}
		return tx.InsertJobs(ctx, jobs)
	})
	return out, err
}

// ArchiveAccount archives an account and, in the same transaction, releases its numbers (their
// carrier releases are jobs that run after the commit) and ends its campaigns: 10DLC campaigns
// become deactivated (each emitting campaign.deactivated), toll-free campaigns canceled, and jobs
// withdraw them all at their carriers.
//
// Every transaction of this service that changes several kinds of rows locks them in one order
// (account, 10DLC campaigns, numbers, toll-free campaigns), so that none deadlocks another on
// PostgreSQL.
func (n *Numbers) ArchiveAccount(ctx context.Context, projectID, id string) (*store.Account, error) {
	return n.cfg.Store.ArchiveAccount(ctx, projectID, id, func(tx *store.Store, a *store.Account) error {
		deactivated, err := tx.DeactivateAccountCampaigns(ctx, a.ID)
		if err != nil {
			return err
		}
		for i := range deactivated {
			if err := campaignDeactivated(ctx, tx, &deactivated[i]); err != nil {
				return err
			}
		}
		released, err := tx.ReleaseAccountNumbers(ctx, a.ID)
		if err != nil {
			return err
		}
		jobs := make([]river.InsertManyParams, len(released))
		for i, pn := range released {
			jobs[i] = river.InsertManyParams{Args: releaseNumberArgs{Carrier: pn.Carrier, Number: pn.Number}}
		}
		canceled, err := tx.CancelAccountTollFreeCampaigns(ctx, a.ID)
		if err != nil {
			return err
		}
		for _, t := range canceled {
			jobs = append(jobs, river.InsertManyParams{Args: withdrawArgs{Carrier: t.Carrier, Reference: t.ID}})
		}
		return tx.InsertJobs(ctx, jobs)
	})
}

// AccountStatus reports whether an account can send local (10DLC) messages; see
// LocalMessagingStatus.
func (n *Numbers) AccountStatus(ctx context.Context, projectID, accountID string) (CapabilityStatus, error) {
	a, err := n.cfg.Store.GetAccount(ctx, projectID, accountID)
	if err != nil {
		return CapabilityStatus{}, err
	}
	var org Organization
	_ = json.Unmarshal([]byte(a.Organization), &org) // written by the API from the contract's schema
	active, attached, err := n.cfg.Store.LocalRegistration(ctx, a.ID)
	if err != nil {
		return CapabilityStatus{}, err
	}
	return LocalMessagingStatus(a.ArchivedAt != nil, org, Registration{ActiveCampaign: active, AttachedNumber: attached}), nil
}

// assignLater tells the number's carrier, after the commit, that the number left campaign from
// and joined campaign to (either may be nil), when the carrier's registry wants to know
// (carriers.NumberAssigner).
func (n *Numbers) assignLater(ctx context.Context, tx *store.Store, pn *store.PhoneNumber, from, to *string) error {
	c, err := n.cfg.Carriers.Get(pn.Carrier)
	if err != nil {
		return nil // a carrier no longer configured has nothing to be told
	}
	if _, ok := c.(carriers.NumberAssigner); !ok {
		return nil
	}
	var jobs []river.InsertManyParams
	if from != nil {
		jobs = append(jobs, river.InsertManyParams{Args: assignNumberArgs{Carrier: pn.Carrier, Campaign: *from, Number: pn.Number}})
	}
	if to != nil {
		jobs = append(jobs, river.InsertManyParams{Args: assignNumberArgs{Carrier: pn.Carrier, Campaign: *to, Number: pn.Number, Assign: true}})
	}
	return tx.InsertJobs(ctx, jobs)
}

// assignNumberArgs assigns a number to a campaign at the number's carrier (Assign), or takes it
// off one.
type assignNumberArgs struct {
	Carrier  string `json:"carrier"`
	Campaign string `json:"campaign"`
	Number   string `json:"number"`
	Assign   bool   `json:"assign"`
}

// Kind names the job.
func (assignNumberArgs) Kind() string { return "assign_number" }

type assignNumberWorker struct {
	river.WorkerDefaults[assignNumberArgs]
	n *Numbers
}

// Work tells the carrier; River retries with backoff while it fails.
func (w *assignNumberWorker) Work(ctx context.Context, j *river.Job[assignNumberArgs]) error {
	c, err := w.n.cfg.Carriers.Get(j.Args.Carrier)
	if err != nil {
		return river.JobCancel(err)
	}
	a, ok := c.(carriers.NumberAssigner)
	if !ok {
		return nil
	}
	if j.Args.Assign {
		return a.AssignNumber(ctx, j.Args.Campaign, j.Args.Number)
	}
	return a.UnassignNumber(ctx, j.Args.Campaign, j.Args.Number)
}

// releaseNumberArgs gives a number back to its carrier after the transaction that released it
// commits, or guards a purchase (see Purchase). It does nothing while a phone number row holds
// the number through that carrier, so a late or repeated run never takes a number from its holder.
type releaseNumberArgs struct {
	Carrier string `json:"carrier"`
	Number  string `json:"number"`
}

// Kind names the job.
func (releaseNumberArgs) Kind() string { return "release_number" }

type releaseNumberWorker struct {
	river.WorkerDefaults[releaseNumberArgs]
	n *Numbers
}

func (w *releaseNumberWorker) Work(ctx context.Context, j *river.Job[releaseNumberArgs]) error {
	held, err := w.n.cfg.Store.HeldNumber(ctx, j.Args.Number)
	switch {
	case err == nil && held.Carrier == j.Args.Carrier:
		return nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return err
	}
	inv, err := w.n.cfg.Carriers.Inventory(j.Args.Carrier)
	if err != nil {
		return river.JobCancel(err) // the carrier is no longer configured: nothing to retry
	}
	return inv.ReleaseNumber(ctx, j.Args.Number)
}

// inventoryError turns a carrier's refusal into the API's error; number names the number asked
// for, if one was.
func inventoryError(err error, number string) error {
	switch {
	case errors.Is(err, carriers.ErrPortInOnly):
		return &Error{Type: TypeNumberNotAvailable, Detail: map[string]any{"reason": "port_in_only"},
			Message: "800 numbers are available only by porting them in; toll-free numbers can be bought in the 833, 844, 855, 866, 877 and 888 prefixes"}
	case errors.Is(err, carriers.ErrNumberUnavailable) && number != "":
		return Errorf(TypeNumberNotAvailable, "%s is not available", number)
	case errors.Is(err, carriers.ErrNumberUnavailable):
		return Errorf(TypeNumberNotAvailable, "the number is not available")
	case errors.Is(err, carriers.ErrNearUnsupported):
		return Errorf("carrier_unsupported", "the carrier cannot search numbers near a place; give an area_code")
	}
	return err
}

func archived(a *store.Account) *Error {
	return Errorf(TypeAccountArchived, "account %s is archived", a.ID)
}

// classifyNumber tells a US or Canadian number's type and, for a local number, its country.
func classifyNumber(e164 string) (typ, country string, ok bool) {
	num, err := phonenumbers.Parse(e164, "")
	if err != nil || num.GetCountryCode() != 1 || !phonenumbers.IsValidNumber(num) {
		return "", "", false
	}
	switch phonenumbers.GetNumberType(num) {
	case phonenumbers.TOLL_FREE:
		return store.NumberTollFree, "", true
	case phonenumbers.FIXED_LINE, phonenumbers.MOBILE, phonenumbers.FIXED_LINE_OR_MOBILE:
		region := phonenumbers.GetRegionCodeForNumber(num)
		return store.NumberLocal, region, region == "US" || region == "CA"
	}
	return "", "", false
}

// nationalFormat writes a number as its country writes it: "(415) 555-0100".
func nationalFormat(e164 string) string {
	num, err := phonenumbers.Parse(e164, "")
	if err != nil {
		return e164
	}
	return phonenumbers.Format(num, phonenumbers.NATIONAL)
}

func typeWords(typ string) string {
	if typ == store.NumberTollFree {
		return "toll-free"
	}
	return typ
}
