package service

import (
	"context"
	"time"

	"github.com/switchboard/switchboard/store"
)

// Event types of voice.
const (
	EventCallEnded          = "call.ended"
	EventRecordingCompleted = "recording.completed"
	EventVoicemailReceived  = "voicemail.received"
)

// The payloads below are the JSON shapes of openapi.yaml's CallEndedEventData (the Call),
// RecordingCompletedEventData and VoicemailReceivedEventData, built without the generated types.

type callEventData struct {
	ID            string       `json:"id"`
	Contact       eventContact `json:"contact"`
	Duration      int          `json:"duration"`
	InitiatedAt   time.Time    `json:"initiated_at"`
	Status        string       `json:"status"`
	From          *string      `json:"from"`
	To            *string      `json:"to"`
	PhoneNumberID *string      `json:"phone_number_id"`
}

type recordingEventData struct {
	ID       string        `json:"id"`
	Duration int           `json:"duration"`
	Call     callEventData `json:"call"`
}

type voicemailEventData struct {
	ID          string        `json:"id"`
	RecordingID string        `json:"recording_id"`
	Duration    int           `json:"duration"`
	Call        callEventData `json:"call"`
}

// callData is a call as voice events carry it.
func callData(c *store.Call, contact *store.Contact) callEventData {
	return callEventData{
		ID: c.ID, Contact: contactOf(contact), Duration: c.Duration, InitiatedAt: c.InitiatedAt.UTC(), Status: c.Status,
		From: &c.FromNumber, To: &c.ToNumber, PhoneNumberID: &c.PhoneNumberID,
	}
}

// callEndedEvent records call.ended.
func callEndedEvent(ctx context.Context, tx *store.Store, c *store.Call, contact *store.Contact) error {
	_, err := tx.InsertEvent(ctx, c.ProjectID, c.AccountID, EventCallEnded, callData(c, contact))
	return err
}

// recordingEvents records recording.completed, and voicemail.received when the recording is a
// voicemail (vm not nil).
func recordingEvents(ctx context.Context, tx *store.Store, r *store.Recording, vm *store.Voicemail, c *store.Call, contact *store.Contact) error {
	call := callData(c, contact)
	if _, err := tx.InsertEvent(ctx, r.ProjectID, r.AccountID, EventRecordingCompleted,
		recordingEventData{ID: r.ID, Duration: r.Duration, Call: call}); err != nil {
		return err
	}
	if vm == nil {
		return nil
	}
	_, err := tx.InsertEvent(ctx, vm.ProjectID, vm.AccountID, EventVoicemailReceived,
		voicemailEventData{ID: vm.ID, RecordingID: vm.RecordingID, Duration: vm.Duration, Call: call})
	return err
}
