package store

import (
	"context"
	"time"

	"gorm.io/gorm/clause"
)

// TypeID prefixes of the voice resources.
const (
	PrefixCall      = "call"
	PrefixRecording = "rec"
	PrefixVoicemail = "vml"
)

// Call is a call to one of an account's numbers, as its carrier reported it. (CarrierName,
// CarrierID) is unique: every report about the call names it.
type Call struct {
	ID            string
	ProjectID     string
	AccountID     string
	PhoneNumberID string
	ContactID     string
	// Carrier is the Name of the adapter that reported the call; CarrierID its id of the call.
	Carrier   string
	CarrierID string
	// FromNumber is the caller; ToNumber the account's number.
	FromNumber string
	ToNumber   string
	Status     string
	// Duration is in seconds.
	Duration int
	// RecordingURL is the carrier's locator of the call's recording, set once it is stored: a
	// repeated report of the same recording is then recognised.
	RecordingURL *string
	InitiatedAt  time.Time
	EndedAt      *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// CallView is a call with its contact, as the API shows it.
type CallView struct {
	Call
	Contact Contact
}

// Recording is the audio of a call, kept in the database. Lists and views leave Data empty;
// RecordingFile reads it.
type Recording struct {
	ID        string
	ProjectID string
	AccountID string
	CallID    string
	// Duration is in seconds.
	Duration    int
	ContentType string
	Size        int64
	Data        []byte
	CreatedAt   time.Time
}

// RecordingView is a recording with its call.
type RecordingView struct {
	Recording
	Call CallView
}

// Voicemail is a recording left by a caller nobody answered.
type Voicemail struct {
	ID          string
	ProjectID   string
	AccountID   string
	CallID      string
	RecordingID string
	// Duration is the recording's, in seconds.
	Duration  int
	CreatedAt time.Time
}

// VoicemailView is a voicemail with its call.
type VoicemailView struct {
	Voicemail
	Call CallView
}

// ResolveContact finds, or creates from init, the account's contact with init's phone number.
// Concurrent callers agree on one contact: an insert that loses the race is ignored and the
// winner's row is read.
func (s *Store) ResolveContact(ctx context.Context, init Contact, at time.Time) (*Contact, error) {
	c := init
	c.ID, c.CreatedAt, c.UpdatedAt = NewID(PrefixContact), at, at
	if c.Metadata == nil {
		c.Metadata = Metadata{}
	}
	conflict := clause.OnConflict{Columns: []clause.Column{{Name: "account_id"}, {Name: "phone_number"}}, DoNothing: true}
	if err := s.q(ctx).Clauses(conflict).Create(&c).Error; err != nil {
		return nil, translate(err, "create contact")
	}
	var out Contact
	if err := s.q(ctx).Where("account_id = ? AND phone_number = ?", init.AccountID, init.PhoneNumber).Take(&out).Error; err != nil {
		return nil, translate(err, "resolve contact")
	}
	return &out, nil
}

// CallByCarrierID returns the call a carrier reported under its own id.
func (s *Store) CallByCarrierID(ctx context.Context, carrier, carrierID string) (*Call, error) {
	var c Call
	if err := s.q(ctx).Where("carrier = ? AND carrier_id = ?", carrier, carrierID).Take(&c).Error; err != nil {
		return nil, translate(err, "call by carrier id")
	}
	return &c, nil
}

// EnsureCall inserts the call unless one with its (Carrier, CarrierID) exists, and returns the
// stored one; created says whether this call inserted it.
func (s *Store) EnsureCall(ctx context.Context, c *Call) (stored *Call, created bool, err error) {
	c.ID = NewID(PrefixCall)
	res := s.q(ctx).Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "carrier"}, {Name: "carrier_id"}}, DoNothing: true}).Create(c)
	if res.Error != nil {
		return nil, false, translate(res.Error, "insert call")
	}
	if res.RowsAffected == 1 {
		return c, true, nil
	}
	stored, err = s.CallByCarrierID(ctx, c.Carrier, c.CarrierID)
	return stored, false, err
}

// MoveCall moves a call to the status of c when the call is still in one of from, and saves
// c's duration, start and end with it. It reports whether the call moved; a call that left
// from meanwhile is not touched.
func (s *Store) MoveCall(ctx context.Context, c *Call, from []string) (bool, error) {
	res := s.q(ctx).Model(&Call{}).Where("id = ? AND status IN ?", c.ID, from).Updates(map[string]any{
		"status": c.Status, "duration": c.Duration, "initiated_at": c.InitiatedAt, "ended_at": c.EndedAt, "updated_at": c.UpdatedAt,
	})
	return res.RowsAffected == 1, translate(res.Error, "move call")
}

// ClaimCallRecording records that the call's recording at url is being stored; false means the
// call already has a recording (a repeated report).
func (s *Store) ClaimCallRecording(ctx context.Context, callID, url string) (bool, error) {
	res := s.q(ctx).Model(&Call{}).Where("id = ? AND recording_url IS NULL", callID).Update("recording_url", url)
	return res.RowsAffected == 1, translate(res.Error, "claim call recording")
}

// InsertRecording stores a recording with its audio.
func (s *Store) InsertRecording(ctx context.Context, r *Recording) error {
	r.Size = int64(len(r.Data))
	return translate(s.q(ctx).Create(r).Error, "insert recording")
}

// InsertVoicemail stores a voicemail.
func (s *Store) InsertVoicemail(ctx context.Context, v *Voicemail) error {
	return translate(s.q(ctx).Create(v).Error, "insert voicemail")
}

// GetCall returns a project's call with its contact.
func (s *Store) GetCall(ctx context.Context, projectID, id string) (*CallView, error) {
	var c Call
	if err := s.q(ctx).Where("id = ? AND project_id = ?", id, projectID).Take(&c).Error; err != nil {
		return nil, translate(err, "get call "+id)
	}
	views, err := s.callViews(ctx, []Call{c})
	if err != nil {
		return nil, err
	}
	return &views[0], nil
}

// ListCalls returns one page of an account's calls, newest first.
func (s *Store) ListCalls(ctx context.Context, projectID, accountID string, p Page) ([]CallView, Cursors, error) {
	rows, cur, err := listOfAccount[Call](s, ctx, projectID, accountID, p, func(c *Call) string { return c.ID })
	if err != nil {
		return nil, cur, err
	}
	views, err := s.callViews(ctx, rows)
	return views, cur, err
}

// recordingColumns are a recording's columns without its audio.
var recordingColumns = []string{"id", "project_id", "account_id", "call_id", "duration", "content_type", "size", "created_at"}

// GetRecording returns a project's recording with its call, without the audio.
func (s *Store) GetRecording(ctx context.Context, projectID, id string) (*RecordingView, error) {
	var r Recording
	if err := s.q(ctx).Select(recordingColumns).Where("id = ? AND project_id = ?", id, projectID).Take(&r).Error; err != nil {
		return nil, translate(err, "get recording "+id)
	}
	views, err := s.recordingViews(ctx, []Recording{r})
	if err != nil {
		return nil, err
	}
	return &views[0], nil
}

// RecordingFile returns a recording with its audio, whoever's it is (signed file URLs name it).
func (s *Store) RecordingFile(ctx context.Context, id string) (*Recording, error) {
	var r Recording
	if err := s.q(ctx).Where("id = ?", id).Take(&r).Error; err != nil {
		return nil, translate(err, "recording file "+id)
	}
	return &r, nil
}

// ListRecordings returns one page of an account's recordings, newest first, without the audio.
func (s *Store) ListRecordings(ctx context.Context, projectID, accountID string, p Page) ([]RecordingView, Cursors, error) {
	if _, err := s.GetAccount(ctx, projectID, accountID); err != nil {
		return nil, Cursors{}, err
	}
	rows, cur, err := paginate(s.q(ctx).Model(&Recording{}).Select(recordingColumns).Where("account_id = ?", accountID), p,
		func(r *Recording) string { return r.ID })
	if err != nil {
		return nil, cur, err
	}
	views, err := s.recordingViews(ctx, rows)
	return views, cur, err
}

// DeleteRecording deletes a project's recording, its audio and the voicemail it is, and returns
// what it was.
func (s *Store) DeleteRecording(ctx context.Context, projectID, id string) (*RecordingView, error) {
	var out *RecordingView
	err := s.Tx(ctx, func(tx *Store) error {
		v, err := tx.GetRecording(ctx, projectID, id)
		if err != nil {
			return err
		}
		if err := tx.q(ctx).Where("recording_id = ?", id).Delete(&Voicemail{}).Error; err != nil {
			return translate(err, "delete voicemail")
		}
		if err := tx.q(ctx).Where("id = ?", id).Delete(&Recording{}).Error; err != nil {
			return translate(err, "delete recording")
		}
		out = v
		return nil
	})
	return out, err
}

// GetVoicemail returns a project's voicemail with its call.
func (s *Store) GetVoicemail(ctx context.Context, projectID, id string) (*VoicemailView, error) {
	var v Voicemail
	if err := s.q(ctx).Where("id = ? AND project_id = ?", id, projectID).Take(&v).Error; err != nil {
		return nil, translate(err, "get voicemail "+id)
	}
	views, err := s.voicemailViews(ctx, []Voicemail{v})
	if err != nil {
		return nil, err
	}
	return &views[0], nil
}

// ListVoicemails returns one page of an account's voicemails, newest first.
func (s *Store) ListVoicemails(ctx context.Context, projectID, accountID string, p Page) ([]VoicemailView, Cursors, error) {
	rows, cur, err := listOfAccount[Voicemail](s, ctx, projectID, accountID, p, func(v *Voicemail) string { return v.ID })
	if err != nil {
		return nil, cur, err
	}
	views, err := s.voicemailViews(ctx, rows)
	return views, cur, err
}

// callViews loads the contacts of calls in one query.
func (s *Store) callViews(ctx context.Context, calls []Call) ([]CallView, error) {
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = c.ContactID
	}
	contacts := map[string]Contact{}
	if len(ids) > 0 {
		var cs []Contact
		if err := s.q(ctx).Where("id IN ?", uniq(ids)).Find(&cs).Error; err != nil {
			return nil, translate(err, "load contacts")
		}
		for _, c := range cs {
			contacts[c.ID] = c
		}
	}
	out := make([]CallView, len(calls))
	for i, c := range calls {
		out[i] = CallView{Call: c, Contact: contacts[c.ContactID]}
	}
	return out, nil
}

// callsByID loads calls with their contacts.
func (s *Store) callsByID(ctx context.Context, ids []string) (map[string]CallView, error) {
	out := map[string]CallView{}
	if len(ids) == 0 {
		return out, nil
	}
	var calls []Call
	if err := s.q(ctx).Where("id IN ?", uniq(ids)).Find(&calls).Error; err != nil {
		return nil, translate(err, "load calls")
	}
	views, err := s.callViews(ctx, calls)
	for _, v := range views {
		out[v.ID] = v
	}
	return out, err
}

func (s *Store) recordingViews(ctx context.Context, recs []Recording) ([]RecordingView, error) {
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.CallID
	}
	calls, err := s.callsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]RecordingView, len(recs))
	for i, r := range recs {
		out[i] = RecordingView{Recording: r, Call: calls[r.CallID]}
	}
	return out, nil
}

func (s *Store) voicemailViews(ctx context.Context, vms []Voicemail) ([]VoicemailView, error) {
	ids := make([]string, len(vms))
	for i, v := range vms {
		ids[i] = v.CallID
	}
	calls, err := s.callsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]VoicemailView, len(vms))
	for i, v := range vms {
		out[i] = VoicemailView{Voicemail: v, Call: calls[v.CallID]}
	}
	return out, nil
}

// VoicemailOfCall returns the voicemail left on a call.
func (s *Store) VoicemailOfCall(ctx context.Context, callID string) (*Voicemail, error) {
	var v Voicemail
	if err := s.q(ctx).Where("call_id = ?", callID).Take(&v).Error; err != nil {
		return nil, translate(err, "voicemail of call "+callID)
	}
	return &v, nil
}
