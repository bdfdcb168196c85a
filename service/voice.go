package service

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/store"
)

// VoiceConfig wires Voice.
type VoiceConfig struct {
	// Store is the database. Required.
	Store *store.Store
	// Carriers are the installation's adapters; recordings are fetched from the reporting one. Required.
	Carriers *Carriers
	// PublicURL is the base of signed recording file URLs. Required.
	PublicURL string
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Voice keeps the calls to the accounts' numbers, their recordings and voicemails, as the
// carriers report them, and hands out short-lived signed URLs of the recordings' audio. Reading
// calls, recordings and voicemails needs no rule and goes to the store directly.
type Voice struct {
	cfg    VoiceConfig
	signer *fileSigner
}

// NewVoice returns the voice service.
func NewVoice(cfg VoiceConfig) (*Voice, error) {
	if cfg.Store == nil || cfg.Carriers == nil || cfg.PublicURL == "" {
		return nil, errors.New("service: VoiceConfig needs Store, Carriers and PublicURL")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	// The signer shares the attachments' installation secret: one secret signs every file URL.
	return &Voice{cfg: cfg, signer: &fileSigner{store: cfg.Store}}, nil
}

// RecordingFilePath is where signed recording file URLs are served, below the public URL.
const RecordingFilePath = "/files/recordings/"

// callRank orders the call statuses: a call only moves to a higher rank, and every final status
// has the highest, so the first final status reported wins.
var callRank = map[string]int{
	carriers.CallQueued: 0, carriers.CallRinging: 1, carriers.CallInProgress: 2,
	carriers.CallCompleted: 3, carriers.CallBusy: 3, carriers.CallNoAnswer: 3, carriers.CallMissed: 3,
	carriers.CallCanceled: 3, carriers.CallFailed: 3,
}

const finalRank = 3

// below lists the statuses ranked lower than rank.
func below(rank int) []string {
	var out []string
	for s, r := range callRank {
		if r < rank {
			out = append(out, s)
		}
	}
	return out
}

// apply records a call event: the call (created on its first report, with the caller's contact
// found or created in the number's account, opted out or not), its move to a later status, and a
// recording with its voicemail, each with its event, in one transaction. Repeated, late and
// out-of-order reports change nothing. A call to a number that no account holds, or a report
// that cannot be understood, is logged and dropped: refusing it would only make the carrier
// report it again. A recording that cannot be fetched is an error, so the carrier reports again.
func (v *Voice) apply(ctx context.Context, carrier string, ev *carriers.CallEvent) error {
	log := v.cfg.Logger.With("carrier", carrier, "carrier_id", ev.CarrierID)
	rank, known := callRank[ev.Status]
	from, fromErr := NormalizeE164(ev.From)
	to, toErr := normalizeAddress(ev.To)
	switch {
	case ev.CarrierID == "":
		log.Warn("call event without a carrier id: dropped")
		return nil
	case !known:
		log.Warn("call event with an unknown status: dropped", "status", ev.Status)
		return nil
	case fromErr != nil || toErr != nil:
		log.Warn("call event with an invalid number: dropped", "from", ev.From, "to", ev.To)
		return nil
	}
	num, err := v.cfg.Store.HeldNumber(ctx, to)
	if errors.Is(err, store.ErrNotFound) || (err == nil && num.AccountID == nil) {
		log.Warn("call to a number no account holds: ignored", "to", to)
		return nil
	}
	if err != nil {
		return err
	}
	audio, err := v.fetchRecording(ctx, carrier, ev)
	if err != nil {
		return err
	}
	at := ev.At.UTC().Truncate(time.Microsecond)
	if ev.At.IsZero() {
		at = v.cfg.Now().UTC().Truncate(time.Microsecond)
	}
	return v.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		contact, err := tx.ResolveContact(ctx, store.Contact{ProjectID: num.ProjectID, AccountID: *num.AccountID, PhoneNumber: from}, at)
		if err != nil {
			return err
		}
		c := &store.Call{ProjectID: num.ProjectID, AccountID: *num.AccountID, PhoneNumberID: num.ID, ContactID: contact.ID,
			Carrier: carrier, CarrierID: ev.CarrierID, FromNumber: from, ToNumber: num.Number, Status: ev.Status,
			InitiatedAt: at, CreatedAt: at, UpdatedAt: at}
		if rank == finalRank {
			c.Duration, c.EndedAt = ev.Duration, &at
			c.InitiatedAt = at.Add(-time.Duration(ev.Duration) * time.Second)
		}
		c, created, err := tx.EnsureCall(ctx, c)
		if err != nil {
			return err
		}
		moved := created
		if !created && rank > callRank[c.Status] {
			next := progress(*c, ev, at)
			if moved, err = tx.MoveCall(ctx, next, below(rank)); err != nil {
				return err
			}
			if moved {
				c = next
			}
		}
		if moved && rank == finalRank {
			if err := callEndedEvent(ctx, tx, c, contact); err != nil {
				return err
			}
		}
		if audio == nil {
			return nil
		}
		return v.record(ctx, tx, c, contact, ev, audio)
	})
}

// progress returns the call moved to the event's status at `at`: a final status ends it with the
// reported duration (or, when none is reported, the time since it began).
func progress(c store.Call, ev *carriers.CallEvent, at time.Time) *store.Call {
	c.Status, c.UpdatedAt = ev.Status, at
	if at.Before(c.InitiatedAt) {
		c.InitiatedAt = at
	}
	if callRank[ev.Status] == finalRank {
		c.EndedAt, c.Duration = &at, ev.Duration
		if c.Duration == 0 {
			c.Duration = int(at.Sub(c.InitiatedAt) / time.Second)
		}
	}
	return &c
}

// fetchRecording copies the event's recording from the carrier, unless there is none or the call
// already has it (a repeated report).
func (v *Voice) fetchRecording(ctx context.Context, carrier string, ev *carriers.CallEvent) (*carriers.Audio, error) {
	if ev.RecordingURL == "" {
		return nil, nil
	}
	c, err := v.cfg.Store.CallByCarrierID(ctx, carrier, ev.CarrierID)
	if err == nil && c.RecordingURL != nil {
		return nil, nil
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	vc, err := capability[carriers.Voice](v.cfg.Carriers, carrier, "voice")
	if err != nil {
		return nil, err
	}
	a, err := vc.FetchRecording(ctx, ev.RecordingURL)
	if err != nil {
		return nil, fmt.Errorf("service: fetch the recording of call %s from %s: %w", ev.CarrierID, carrier, err)
	}
	a.ContentType = StoredMediaType(a.ContentType, a.Data)
	return &a, nil
}

// record stores the call's recording, and its voicemail when the event says it is one, with
// their events; a call that already has its recording keeps it.
func (v *Voice) record(ctx context.Context, tx *store.Store, c *store.Call, contact *store.Contact, ev *carriers.CallEvent, a *carriers.Audio) error {
	if claimed, err := tx.ClaimCallRecording(ctx, c.ID, ev.RecordingURL); err != nil || !claimed {
		return err
	}
	now := v.cfg.Now().UTC().Truncate(time.Microsecond)
	r := &store.Recording{ID: store.NewID(store.PrefixRecording), ProjectID: c.ProjectID, AccountID: c.AccountID, CallID: c.ID,
		Duration: ev.RecordingSeconds, ContentType: a.ContentType, Data: a.Data, CreatedAt: now}
	if err := tx.InsertRecording(ctx, r); err != nil {
		return err
	}
	var vm *store.Voicemail
	if ev.Voicemail {
		vm = &store.Voicemail{ID: store.NewID(store.PrefixVoicemail), ProjectID: c.ProjectID, AccountID: c.AccountID, CallID: c.ID,
			RecordingID: r.ID, Duration: r.Duration, CreatedAt: now}
		if err := tx.InsertVoicemail(ctx, vm); err != nil {
			return err
		}
	}
	return recordingEvents(ctx, tx, r, vm, c, contact)
}

// RecordingLocation returns where GET /recordings/{id}/file redirects: a signed URL of the
// project's recording's audio that works for FileURLTTL.
func (v *Voice) RecordingLocation(ctx context.Context, projectID, id string) (string, error) {
	if _, err := v.cfg.Store.GetRecording(ctx, projectID, id); err != nil {
		return "", err
	}
	token, err := v.signer.token(ctx, id, v.cfg.Now().Add(FileURLTTL))
	if err != nil {
		return "", err
	}
	return v.cfg.PublicURL + RecordingFilePath + token, nil
}

// OpenRecording checks a recording file token and returns the recording it grants, with its
// audio; ErrBadFileToken when the token is malformed, forged or expired, or the recording is gone.
func (v *Voice) OpenRecording(ctx context.Context, token string) (*store.Recording, error) {
	id, err := v.signer.verify(ctx, token, v.cfg.Now())
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(id, store.PrefixRecording+"_") {
		return nil, ErrBadFileToken
	}
	r, err := v.cfg.Store.RecordingFile(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrBadFileToken
	}
	return r, err
}

// token signs id until exp, in the form of every signed file URL: "{id}.{unix exp}.{mac}".
func (f *fileSigner) token(ctx context.Context, id string, exp time.Time) (string, error) {
	key, err := f.key(ctx)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s.%d.%s", id, exp.Unix(), f.mac(key, id, exp.Unix())), nil
}

// verify returns the id that a token grants at now; ErrBadFileToken when the token is
// malformed, forged or expired.
func (f *fileSigner) verify(ctx context.Context, token string, now time.Time) (string, error) {
	id, rest, _ := strings.Cut(token, ".")
	expText, mac, ok := strings.Cut(rest, ".")
	exp, err := strconv.ParseInt(expText, 10, 64)
	if !ok || err != nil || now.Unix() > exp {
		return "", ErrBadFileToken
	}
	key, err := f.key(ctx)
	if err != nil {
		return "", err
	}
	if !hmac.Equal([]byte(mac), []byte(f.mac(key, id, exp))) {
		return "", ErrBadFileToken
	}
	return id, nil
}
