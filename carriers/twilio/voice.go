package twilio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/switchboard/switchboard/carriers"
)

// maxRecordingBytes caps a fetched recording: MaxVoicemailSeconds of 8 kHz 16-bit WAV, with room.
const maxRecordingBytes = 16 << 20

// FetchRecording downloads a recording that a recording callback located, as WAV (Twilio serves
// RecordingUrl+".wav"). The credentials only go to the account's own recordings under the API
// base: any other URL is refused.
func (c *Carrier) FetchRecording(ctx context.Context, recordingURL string) (carriers.Audio, error) {
	prefix := c.client.base + c.client.accountPath("/Recordings/")
	if !strings.HasPrefix(recordingURL, prefix) || strings.ContainsAny(recordingURL[len(prefix):], "/?#") {
		return carriers.Audio{}, errors.New("twilio: not a recording of the account: " + recordingURL)
	}
	u := strings.TrimSuffix(recordingURL, ".json")
	if !strings.HasSuffix(u, ".wav") {
		u += ".wav"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return carriers.Audio{}, err
	}
	req.SetBasicAuth(c.client.sid, c.client.token)
	resp, err := c.client.http.Do(req)
	if err != nil {
		return carriers.Audio{}, fmt.Errorf("twilio: fetch recording: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return carriers.Audio{}, fmt.Errorf("twilio: fetch recording: HTTP %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxRecordingBytes+1))
	if err != nil {
		return carriers.Audio{}, fmt.Errorf("twilio: fetch recording: %w", err)
	}
	if len(data) > maxRecordingBytes {
		return carriers.Audio{}, errors.New("twilio: fetch recording: larger than 16 MiB")
	}
	return carriers.Audio{ContentType: "audio/wav", Data: data}, nil
}

var _ carriers.Voice = (*Carrier)(nil)

// AuthorizeMedia adds the account's credentials to a request for an inbound message's media
// (MediaUrl{N}: {APIBase}/2010-04-01/Accounts/{AccountSid}/Messages/{MessageSid}/Media/{Sid}), as
// Twilio requires when the account enforces HTTP authentication on media. Twilio answers with a
// redirect to its CDN, and the HTTP client does not carry the credentials to that other host.
func (c *Carrier) AuthorizeMedia(req *http.Request) {
	prefix := c.client.base + c.client.accountPath("/Messages/")
	if u := req.URL.String(); strings.HasPrefix(u, prefix) && !strings.Contains(u[len(prefix):], "..") {
		req.SetBasicAuth(c.client.sid, c.client.token)
	}
}

var _ carriers.MediaSource = (*Carrier)(nil)
