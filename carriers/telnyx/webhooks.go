package telnyx

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
)

// Signature headers of Telnyx's webhooks: an Ed25519 signature (base64) of timestamp|body.
const (
	SignatureHeader = "telnyx-signature-ed25519"
	TimestampHeader = "telnyx-timestamp"
)

// signatureTolerance is how far a webhook's timestamp may be from now.
const signatureTolerance = 5 * time.Minute

// Verify reports whether body carries a valid signature by publicKey, made within the tolerance
// of now.
func Verify(publicKey ed25519.PublicKey, body []byte, signature, timestamp string, now time.Time) bool {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || now.Sub(time.Unix(ts, 0)).Abs() > signatureTolerance {
		return false
	}
	sig, err := base64.StdEncoding.DecodeString(signature)
	if err != nil || len(sig) != ed25519.SignatureSize || len(publicKey) != ed25519.PublicKeySize {
		return false
	}
	return ed25519.Verify(publicKey, append([]byte(timestamp+"|"), body...), sig)
}

// Handler serves Telnyx's webhooks at CallbackPath+"/webhooks"; the server mounts it as a public
// route outside the API contract. A request without a valid signature is refused with 403.
//
//	message.finalized   a sent message's final status: a receipt
//	message.received    a message to one of our numbers, with its media
//
// Other events (message.sent, …) are acknowledged and ignored.
func (c *Carrier) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+CallbackPath+"/webhooks", c.webhook)
	return mux
}

// event is a webhook's body, as far as the adapter reads it.
type event struct {
	Data struct {
		EventType  string    `json:"event_type"`
		ID         string    `json:"id"`
		OccurredAt time.Time `json:"occurred_at"`
		Payload    struct {
			ID   string `json:"id"`
			From struct {
				PhoneNumber string `json:"phone_number"`
			} `json:"from"`
			To []struct {
				PhoneNumber string `json:"phone_number"`
				Status      string `json:"status"`
			} `json:"to"`
			Text       string `json:"text"`
			WebhookURL string `json:"webhook_url"`
			Media      []struct {
				URL         string `json:"url"`
				ContentType string `json:"content_type"`
			} `json:"media"`
			Errors []struct {
				Code string `json:"code"`
			} `json:"errors"`
		} `json:"payload"`
	} `json:"data"`
}

// receiptStatus maps a message.finalized recipient status to a receipt's.
var receiptStatus = map[string]carriers.ReceiptStatus{
	"delivered":       carriers.ReceiptDelivered,
	"delivery_failed": carriers.ReceiptFailed,
	"sending_failed":  carriers.ReceiptFailed,
}

func (c *Carrier) webhook(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	if !Verify(c.publicKey, body, r.Header.Get(SignatureHeader), r.Header.Get(TimestampHeader), c.cfg.Now()) {
		c.cfg.Logger.Warn("telnyx: webhook refused: missing, wrong or stale signature")
		http.Error(w, "invalid telnyx-signature-ed25519", http.StatusForbidden)
		return
	}
	var ev event
	if err := json.Unmarshal(body, &ev); err != nil {
		http.Error(w, "unreadable event", http.StatusBadRequest)
		return
	}
	p := ev.Data.Payload
	var rep carriers.Report
	switch ev.Data.EventType {
	case "message.finalized":
		if len(p.To) == 0 {
			break
		}
		status, ok := receiptStatus[p.To[0].Status]
		if !ok {
			break // delivery_unconfirmed: no receipt
		}
		ref, err := c.receiptReference(r.Context(), p.ID, p.WebhookURL)
		if err != nil {
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
		if ref == "" {
			break // a message we did not send
		}
		rc := &carriers.Receipt{Reference: ref, CarrierID: p.ID, Status: status, At: c.cfg.Now()}
		if status == carriers.ReceiptFailed {
			rc.FailureReason = carriers.FailureUnknown
			if len(p.Errors) > 0 {
				rc.FailureReason = failureReason(p.Errors[0].Code)
			}
		}
		rep = carriers.Report{Carrier: Name, Receipt: rc}
	case "message.received":
		in := &carriers.InboundMessage{CarrierID: p.ID, From: p.From.PhoneNumber, Body: p.Text, At: c.cfg.Now()}
		if len(p.To) > 0 {
			in.To = p.To[0].PhoneNumber
		}
		for _, m := range p.Media {
			in.Media = append(in.Media, carriers.Media{URL: m.URL, ContentType: m.ContentType})
		}
		rep = carriers.Report{Carrier: Name, Inbound: in}
	}
	if rep.Receipt != nil || rep.Inbound != nil {
		if err := c.report(r.Context(), rep); err != nil {
			http.Error(w, "try again", http.StatusInternalServerError)
			return
		}
	}
	w.WriteHeader(http.StatusOK)
}

// receiptReference returns the reference of the sent message id, "" when it is not ours. Submit
// puts the reference in the message's webhook URL, which Telnyx repeats in the signed payload: the
// webhook can come before Submit has recorded the id Telnyx answered (the carrier is quick, the
// database slow), and would otherwise be taken for another's. A message sent without it (by an
// earlier release) is looked up by its id.
func (c *Carrier) receiptReference(ctx context.Context, id, webhookURL string) (string, error) {
	if u, err := url.Parse(webhookURL); err == nil {
		if ref := u.Query().Get("reference"); ref != "" {
			return ref, nil
		}
	}
	return c.cfg.Store.ReferenceOf(ctx, id)
}

// report hands a report to the core; one it refuses is kept in a job that reports it again.
func (c *Carrier) report(ctx context.Context, rep carriers.Report) error {
	if err := c.cfg.Reporter.Report(ctx, rep); err != nil {
		c.cfg.Logger.Info("telnyx: report refused; retrying in a job", "err", err)
		return c.cfg.Store.InsertJob(context.WithoutCancel(ctx), reportArgs{Report: rep}, nil)
	}
	return nil
}

// reportArgs is a job that reports a webhook the core refused, until it accepts it.
type reportArgs struct {
	Report carriers.Report `json:"report"`
}

// Kind names the job.
func (reportArgs) Kind() string { return "telnyx_report" }

type reportWorker struct {
	river.WorkerDefaults[reportArgs]
	c *Carrier
}

// Work reports again; River retries the job while the core refuses.
func (w *reportWorker) Work(ctx context.Context, j *river.Job[reportArgs]) error {
	if err := w.c.cfg.Reporter.Report(ctx, j.Args.Report); err != nil {
		return fmt.Errorf("telnyx: report again: %w", err)
	}
	return nil
}
