package twilio

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
)

// Handler serves the callbacks Twilio posts under CallbackPath; the server mounts it as a
// public route outside the API contract. Every request must be a POST whose X-Twilio-Signature
// is valid for the public URL it was sent to; others are refused with 403 before anything is
// read from them.
//
//	POST /carriers/twilio/messages/status?reference=…   a message's status callback (StatusCallback)
//	POST /carriers/twilio/messages/inbound              a message to one of our numbers (SmsUrl)
//	POST /carriers/twilio/voice                         an incoming call (VoiceUrl): answered with a voicemail recorder
//	POST /carriers/twilio/voice/status                  a call's progress (StatusCallback of the number)
//	POST /carriers/twilio/voice/recording               a recording is ready (recordingStatusCallback)
//	POST /carriers/twilio/trusthub/status               a TrustHub bundle's status changed (StatusCallback)
func (c *Carrier) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+CallbackPath+"/messages/status", c.signed(c.messageStatus))
	mux.HandleFunc("POST "+CallbackPath+"/messages/inbound", c.signed(c.inboundMessage))
	mux.HandleFunc("POST "+CallbackPath+"/voice", c.signed(c.incomingCall))
	mux.HandleFunc("POST "+CallbackPath+"/voice/status", c.signed(c.callStatus))
	mux.HandleFunc("POST "+CallbackPath+"/voice/recording", c.signed(c.recording))
	mux.HandleFunc("POST "+CallbackPath+"/trusthub/status", c.signed(c.trusthubStatus))
	return mux
}

// signed refuses a request whose signature is missing or wrong with 403; the signed URL is the
// public URL of the request (PublicURL, then the path and query as received).
func (c *Carrier) signed(next func(http.ResponseWriter, *http.Request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, "unreadable form", http.StatusBadRequest)
			return
		}
		full := c.public + r.URL.RequestURI()
		if !ValidSignature(c.cfg.AuthToken, full, r.PostForm, r.Header.Get(SignatureHeader)) {
			c.cfg.Logger.Warn("twilio: callback refused: missing or wrong signature", "url", full)
			http.Error(w, "invalid X-Twilio-Signature", http.StatusForbidden)
			return
		}
		next(w, r)
	}
}

// messageStatus reports the final status of a message as a receipt.
func (c *Carrier) messageStatus(w http.ResponseWriter, r *http.Request) {
	status, ok := receiptStatus[r.PostForm.Get("MessageStatus")]
	ref := r.URL.Query().Get("reference")
	if !ok || ref == "" {
		w.WriteHeader(http.StatusNoContent) // a step on the way, or a message we did not send
		return
	}
	rc := &carriers.Receipt{Reference: ref, CarrierID: r.PostForm.Get("MessageSid"), Status: status, At: c.cfg.Now()}
	if status == carriers.ReceiptFailed {
		rc.FailureReason = failureReason(r.PostForm.Get("ErrorCode"))
	}
	c.report(w, r, carriers.Report{Carrier: Name, Receipt: rc}, "")
}

// inboundMessage reports a message a handset sent, and answers empty TwiML (no reply from
// Twilio: the core sends its own replies).
func (c *Carrier) inboundMessage(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	in := &carriers.InboundMessage{CarrierID: f.Get("MessageSid"), From: f.Get("From"), To: f.Get("To"), Body: f.Get("Body"), At: c.cfg.Now()}
	if in.CarrierID == "" {
		in.CarrierID = f.Get("SmsSid")
	}
	n, _ := strconv.Atoi(f.Get("NumMedia"))
	for i := range min(n, 10) {
		if u := f.Get("MediaUrl" + strconv.Itoa(i)); u != "" {
			in.Media = append(in.Media, carriers.Media{URL: u, ContentType: f.Get("MediaContentType" + strconv.Itoa(i))})
		}
	}
	c.report(w, r, carriers.Report{Carrier: Name, Inbound: in}, emptyTwiML)
}

// emptyTwiML answers a callback that wants TwiML with nothing to do.
const emptyTwiML = `<?xml version="1.0" encoding="UTF-8"?><Response></Response>`

// MaxVoicemailSeconds caps a voicemail the recorder takes.
const MaxVoicemailSeconds = 300

// voicemailPrompt is what a caller hears before the beep.
const voicemailPrompt = "Nobody can take your call right now. Please leave a message after the beep."

// incomingCall reports a ringing call and answers with TwiML that records a voicemail; the
// recording arrives later at /voice/recording.
func (c *Carrier) incomingCall(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><Response><Say>`)
	_ = xml.EscapeText(&b, []byte(voicemailPrompt))
	b.WriteString(`</Say><Record maxLength="` + strconv.Itoa(MaxVoicemailSeconds) + `" playBeep="true" recordingStatusCallbackMethod="POST" recordingStatusCallback="`)
	_ = xml.EscapeText(&b, []byte(c.callbackURL("/voice/recording")))
	b.WriteString(`"/><Hangup/></Response>`)
	ev := c.callEvent(r, carriers.CallRinging)
	c.report(w, r, carriers.Report{Carrier: Name, Call: ev}, b.String())
}

// callStatus reports a call's progress.
func (c *Carrier) callStatus(w http.ResponseWriter, r *http.Request) {
	status, ok := callStatuses[r.PostForm.Get("CallStatus")]
	if !ok {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	ev := c.callEvent(r, status)
	ev.Duration, _ = strconv.Atoi(r.PostForm.Get("CallDuration"))
	c.report(w, r, carriers.Report{Carrier: Name, Call: ev}, "")
}

// recording reports a completed voicemail recording on its (missed) call; the core then copies
// it with FetchRecording.
func (c *Carrier) recording(w http.ResponseWriter, r *http.Request) {
	f := r.PostForm
	if st := f.Get("RecordingStatus"); (st != "" && st != "completed") || f.Get("RecordingUrl") == "" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	ev := c.callEvent(r, carriers.CallMissed)
	ev.RecordingURL, ev.Voicemail = f.Get("RecordingUrl"), true
	ev.RecordingSeconds, _ = strconv.Atoi(f.Get("RecordingDuration"))
	c.report(w, r, carriers.Report{Carrier: Name, Call: ev}, "")
}

// callEvent is the event a voice callback tells, with status.
func (c *Carrier) callEvent(r *http.Request, status string) *carriers.CallEvent {
	f := r.PostForm
	return &carriers.CallEvent{CarrierID: f.Get("CallSid"), From: f.Get("From"), To: f.Get("To"), Status: status, At: c.cfg.Now()}
}

// report hands a report to the core and answers Twilio (with twiml, when not empty). Twilio
// does not retry callbacks by default, so a report the core refuses is kept in a job that
// reports it again; only when even that fails does Twilio get a 500.
func (c *Carrier) report(w http.ResponseWriter, r *http.Request, rep carriers.Report, twiml string) {
	ctx := r.Context()
	if err := c.cfg.Reporter.Report(ctx, rep); err != nil {
		c.cfg.Logger.Info("twilio: report refused; retrying in a job", "err", err)
		if err := c.cfg.Store.InsertJob(context.WithoutCancel(ctx), reportArgs{Report: rep}, nil); err != nil {
			c.cfg.Logger.Error("twilio: keep a refused report", "err", err)
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
	}
	if twiml == "" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	_, _ = w.Write([]byte(twiml))
}

// reportArgs is a job that reports a callback the core refused, until it accepts it.
type reportArgs struct {
	Report carriers.Report `json:"report"`
}

// Kind names the job.
func (reportArgs) Kind() string { return "twilio_report" }

type reportWorker struct {
	river.WorkerDefaults[reportArgs]
	c *Carrier
}

// Work reports again; River retries the job, with backoff, while the core refuses.
func (w *reportWorker) Work(ctx context.Context, j *river.Job[reportArgs]) error {
	if err := w.c.cfg.Reporter.Report(ctx, j.Args.Report); err != nil {
		return fmt.Errorf("twilio: report again: %w", err)
	}
	return nil
}
