package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/kit"
)

// Simulated calls.
const (
	// RingSeconds is how long a simulated call rings before it is answered or goes to voicemail.
	RingSeconds = 5
	// MaxVoicemailSeconds caps a simulated voicemail (its WAV file is 16,000 bytes a second).
	MaxVoicemailSeconds = 300
	// WAVSampleRate is the sample rate of simulated recordings: 8 kHz mono 16-bit PCM, as telephony.
	WAVSampleRate = 8000
	// ToneHz is the pitch of the tone that simulated voicemails record.
	ToneHz = 440
)

// recordingScheme prefixes the locators of simulated recordings: sim-recording:{seconds}:{call id}.
// The audio is a tone generated again on every fetch, so nothing needs keeping and every
// instance fetches the same file.
const recordingScheme = "sim-recording:"

// Call is an inbound call a handset places to one of the installation's numbers.
type Call struct {
	// From is the handset (E.164); To is our number.
	From, To string
	// Answered calls talk for TalkSeconds (default 30) and complete. Unanswered ones ring
	// RingSeconds and leave a voicemail of VoicemailSeconds (missed), or none (no_answer) when it is 0.
	Answered         bool
	TalkSeconds      int
	VoicemailSeconds int
}

// PlaceCall simulates an inbound call that has just ended, reporting its progress through the
// Reporter as a carrier does: ringing, then in_progress and completed when answered, or missed
// with a voicemail recording (no_answer without one). It returns the carrier id of the call.
func (c *Carrier) PlaceCall(ctx context.Context, call Call) (string, error) {
	if call.VoicemailSeconds < 0 || call.VoicemailSeconds > MaxVoicemailSeconds || call.TalkSeconds < 0 {
		return "", fmt.Errorf("sim: a voicemail lasts 0 to %d seconds, and a call does not last negative time", MaxVoicemailSeconds)
	}
	if call.Answered && call.TalkSeconds == 0 {
		call.TalkSeconds = 30
	}
	id := kit.NewID("simcall")
	event := func(status string, at time.Time) *carriers.CallEvent {
		return &carriers.CallEvent{CarrierID: id, From: call.From, To: call.To, Status: status, At: at}
	}
	duration := RingSeconds + call.TalkSeconds + call.VoicemailSeconds
	end := c.cfg.Now().UTC()
	start := end.Add(-time.Duration(duration) * time.Second)
	answered := start.Add(RingSeconds * time.Second)
	events := []*carriers.CallEvent{event(carriers.CallRinging, start)}
	var last *carriers.CallEvent
	switch {
	case call.Answered:
		events = append(events, event(carriers.CallInProgress, answered))
		last = event(carriers.CallCompleted, end)
	case call.VoicemailSeconds > 0:
		last = event(carriers.CallMissed, end)
		last.RecordingURL = RecordingURL(call.VoicemailSeconds, id)
		last.RecordingSeconds, last.Voicemail = call.VoicemailSeconds, true
	default:
		last = event(carriers.CallNoAnswer, end)
	}
	last.Duration = duration
	for _, ev := range append(events, last) {
		if err := c.cfg.Reporter.Report(ctx, carriers.Report{Carrier: Name, Call: ev}); err != nil {
			return id, fmt.Errorf("sim: report call %s (%s): %w", id, ev.Status, err)
		}
	}
	return id, nil
}

// RecordingURL locates the simulated recording of a call (a tone lasting seconds), as the
// simulator reports it and FetchRecording reads it.
func RecordingURL(seconds int, callID string) string {
	return recordingScheme + strconv.Itoa(seconds) + ":" + callID
}

// FetchRecording returns a simulated recording: a WAV file of a tone as long as the voicemail.
func (c *Carrier) FetchRecording(_ context.Context, url string) (carriers.Audio, error) {
	secs, _, ok := strings.Cut(strings.TrimPrefix(url, recordingScheme), ":")
	n, err := strconv.Atoi(secs)
	if !strings.HasPrefix(url, recordingScheme) || !ok || err != nil || n < 0 || n > MaxVoicemailSeconds {
		return carriers.Audio{}, errors.New("sim: no recording at " + url)
	}
	return carriers.Audio{ContentType: "audio/wav", Data: ToneWAV(n)}, nil
}

// ToneWAV returns a WAV file (RIFF, PCM, 8 kHz, mono, 16-bit) of a ToneHz tone lasting seconds.
func ToneWAV(seconds int) []byte {
	const bytesPerSample = 2
	samples := seconds * WAVSampleRate
	dataLen := samples * bytesPerSample
	b := make([]byte, 44+dataLen)
	le := binary.LittleEndian
	copy(b[0:], "RIFF")
	le.PutUint32(b[4:], uint32(36+dataLen))
	copy(b[8:], "WAVEfmt ")
	le.PutUint32(b[16:], 16)                           // fmt chunk size
	le.PutUint16(b[20:], 1)                            // PCM
	le.PutUint16(b[22:], 1)                            // mono
	le.PutUint32(b[24:], WAVSampleRate)                // sample rate
	le.PutUint32(b[28:], WAVSampleRate*bytesPerSample) // byte rate
	le.PutUint16(b[32:], bytesPerSample)               // block align
	le.PutUint16(b[34:], 8*bytesPerSample)             // bits per sample
	copy(b[36:], "data")
	le.PutUint32(b[40:], uint32(dataLen))
	for i := 0; i < samples; i++ {
		v := 0.3 * math.Sin(2*math.Pi*ToneHz*float64(i)/WAVSampleRate)
		le.PutUint16(b[44+i*bytesPerSample:], uint16(int16(v*math.MaxInt16)))
	}
	return b
}

var _ carriers.Voice = (*Carrier)(nil)
