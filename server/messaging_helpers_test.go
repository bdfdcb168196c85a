package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/store"
)

// numberSeq makes the suite's sending numbers unique (+1999 area: no inventory uses it).
var numberSeq atomic.Int64

// newNumber returns a phone number nobody holds yet.
func newNumber() string { return fmt.Sprintf("+1999%07d", numberSeq.Add(1)) }

// handsetSeq makes the suite's handsets unique: the simulated carrier's outbox is shared by
// every spec.
var handsetSeq atomic.Int64

// newHandset returns a handset number no other spec writes to.
func newHandset() string { return fmt.Sprintf("+1646%07d", handsetSeq.Add(1)) }

// numberSetup says how addNumber prepares a number.
type numberSetup struct {
	// Type is local (default), toll_free or short_code.
	Type string
	// Campaign is the status of the local number's 10DLC campaign ("" for none); Attached says
	// whether the number is attached to it.
	Campaign string
	Attached bool
	// TollFree is the status of the toll-free number's verification ("" for none).
	TollFree string
}

// sendable is a local number attached to an active campaign.
var sendable = numberSetup{Type: store.NumberLocal, Campaign: store.CampaignActive, Attached: true}

// newSendingAccount returns a new tenant with an account that holds a sendable number, and that
// number's id and E.164.
func newSendingAccount() (t *tenant, acct, numberID, number string) {
	t = newTenant()
	acct = t.createAccount("Acme Dental")
	numberID, number = t.addNumber(acct, sendable)
	return t, acct, numberID, number
}

// fixtureCampaign and fixtureTollFree are the registration details of the campaigns addNumber
// writes, complete as the API would have taken them, so that listing them answers what the
// contract describes.
var (
	fixtureCampaign = store.CampaignParams{UseCases: []string{"account_notification"},
		Description: "Appointment reminders for Acme Dental patients.", ConsentFlow: "Patients opt in on the booking form.",
		MessageSamples: []string{"Acme Dental: your cleaning is tomorrow at 9am. Reply STOP to opt out.",
			"Acme Dental: your appointment is confirmed. Reply STOP to opt out."},
		Includes: []string{}, Volume: "low"}
	fixtureTollFree = store.TollFreeParams{UseCases: []string{"account_notification"},
		Description:    "Appointment reminders for Acme Dental patients.",
		MessageSamples: []string{"Acme Dental: your cleaning is tomorrow at 9am. Reply STOP to opt out."}, Includes: []string{},
		PrivacyPolicyURL: "https://acme.example/privacy", TermsAndConditionsURL: "https://acme.example/terms"}
)

// addNumber gives an account a number directly in the store (the phone-number API is another
// release's) and returns its id and number.
func (t *tenant) addNumber(account string, setup numberSetup) (id, number string) {
	ctx := context.Background()
	db := st.DB().WithContext(ctx)
	now := time.Now().UTC()
	if setup.Type == "" {
		setup.Type = store.NumberLocal
	}
	id, number = store.NewID(store.PrefixPhoneNumber), newNumber()
	if setup.Type == store.NumberShortCode {
		number = fmt.Sprintf("%06d", numberSeq.Add(1)%1000000)
	}
	var campaignID, attachment any
	if setup.Campaign != "" {
		cid := store.NewID(store.PrefixCampaign)
		ExpectWithOffset(1, db.Exec(`INSERT INTO campaigns (id, project_id, account_id, carrier, status, params, created_at, updated_at)
			VALUES (?, ?, ?, 'sim', ?, ?, ?, ?)`, cid, t.ProjectID, account, setup.Campaign, fixtureCampaign, now, now).Error).To(Succeed())
		campaignID, attachment = cid, store.AttachmentPending
		if setup.Attached {
			attachment = store.AttachmentDone
		}
	}
	ExpectWithOffset(1, db.Exec(`INSERT INTO phone_numbers (id, project_id, account_id, number, type, country, name, metadata,
		carrier, campaign_id, attachment_status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'US', 'Main line', '{}', 'sim', ?, ?, ?, ?)`,
		id, t.ProjectID, account, number, setup.Type, campaignID, attachment, now, now).Error).To(Succeed())
	if setup.TollFree != "" {
		ExpectWithOffset(1, db.Exec(`INSERT INTO toll_free_campaigns (id, project_id, account_id, phone_number_id, carrier, status,
			params, created_at, updated_at) VALUES (?, ?, ?, ?, 'sim', ?, ?, ?, ?)`,
			store.NewID(store.PrefixTollFreeCampaign), t.ProjectID, account, id, setup.TollFree, fixtureTollFree, now, now).Error).To(Succeed())
	}
	return id, number
}

// send posts a message and expects 201.
func (t *tenant) send(account string, body map[string]any) map[string]any {
	r := t.post("/accounts/"+account+"/messages", body)
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusCreated), r.String())
	return r.JSON()
}

// messageStatus reads a message's status through the API.
func (t *tenant) messageStatus(id string) func() string {
	return func() string {
		m := t.get("/messages/" + id).JSON()
		s, _ := m["status"].(string)
		return s
	}
}

// awaitStatus waits until a message reaches status and returns it.
func (t *tenant) awaitStatus(id, status string) map[string]any {
	EventuallyWithOffset(1, t.messageStatus(id)).WithTimeout(20 * time.Second).WithPolling(50 * time.Millisecond).Should(Equal(status))
	return t.get("/messages/" + id).JSON()
}

// outbox is what the simulated carrier delivered to a handset.
func outbox(to string) []sim.OutboxEntry {
	entries, err := sim.Outbox(context.Background(), st.Sim(), to)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return entries
}

// events returns the data of a project's events of one type, oldest first.
func (t *tenant) events(typ string) []map[string]any {
	evs, _, err := st.ListEvents(context.Background(), t.ProjectID, typ, store.Page{Limit: 100})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	out := make([]map[string]any, 0, len(evs))
	for i := len(evs) - 1; i >= 0; i-- {
		var d map[string]any
		ExpectWithOffset(1, json.Unmarshal([]byte(evs[i].Data), &d)).To(Succeed())
		out = append(out, d)
	}
	return out
}

// eventsFor returns the data of a project's events of one type about one resource id.
func (t *tenant) eventsFor(typ, id string) []map[string]any {
	var out []map[string]any
	for _, e := range t.events(typ) {
		if e["id"] == id {
			out = append(out, e)
		}
	}
	return out
}
