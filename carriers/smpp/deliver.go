package smpp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/linxGnu/gosmpp/data"
	"github.com/linxGnu/gosmpp/pdu"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/kit"
)

// Receipt states as the receipt's stat: field (SMPP 3.4 appendix B) or message_state TLV names
// them, and what they mean for a part. Intermediate states (ENROUTE, ACCEPTD is final in 3.4 but
// means "read on the subscriber's behalf", which counts as delivered) are acknowledged and
// otherwise ignored.
//
//	stat      message_state  part outcome
//	DELIVRD   2              delivered
//	ACCEPTD   6              delivered
//	EXPIRED   3              failed: expired
//	REJECTD   8              failed: carrier_filtered
//	UNDELIV   5              failed: by err (below), else unreachable_carrier
//	DELETED   4              failed: unknown_error
//	UNKNOWN   7              failed: unknown_error
//	ENROUTE   1              none yet
//
// An UNDELIV receipt's err: field carries the network's error, which SMSCs commonly pass from
// GSM MAP: 001 unknown subscriber, 005 unidentified subscriber and 009 illegal subscriber mean
// invalid_mobile_number; 011 teleservice not provisioned (the number cannot take SMS, as a
// landline) means landline.
var receiptStates = map[string]struct {
	final  bool
	status string
	reason string
}{
	"DELIVRD": {true, PartDelivered, ""},
	"ACCEPTD": {true, PartDelivered, ""},
	"EXPIRED": {true, PartFailed, carriers.FailureExpired},
	"REJECTD": {true, PartFailed, carriers.FailureCarrierFiltered},
	"UNDELIV": {true, PartFailed, carriers.FailureUnreachableCarrier},
	"DELETED": {true, PartFailed, carriers.FailureUnknown},
	"UNKNOWN": {true, PartFailed, carriers.FailureUnknown},
	"ENROUTE": {false, "", ""},
}

// messageStates names the message_state TLV's values as stat: does.
var messageStates = map[byte]string{1: "ENROUTE", 2: "DELIVRD", 3: "EXPIRED", 4: "DELETED", 5: "UNDELIV", 6: "ACCEPTD", 7: "UNKNOWN", 8: "REJECTD"}

// undeliverableErrors maps an UNDELIV receipt's err: to a failure reason.
var undeliverableErrors = map[string]string{
	"001": carriers.FailureInvalidMobileNumber,
	"005": carriers.FailureInvalidMobileNumber,
	"009": carriers.FailureInvalidMobileNumber,
	"011": carriers.FailureLandline,
}

// receipt is a parsed delivery receipt.
type receipt struct {
	ID, Stat, Err string
}

// parseReceipt reads a receipt: the receipted_message_id and message_state TLVs when the SMSC
// sends them, else the text "id:… sub:… dlvrd:… submit date:… done date:… stat:… err:… text:…".
func parseReceipt(d *pdu.DeliverSM) (receipt, error) {
	var r receipt
	text, _ := d.Message.GetMessageWithEncoding(data.ASCII)
	fields := map[string]string{}
	lower := strings.ToLower(text)
	for _, key := range []string{"id:", "sub:", "dlvrd:", "submit date:", "done date:", "stat:", "err:", "text:"} {
		i := strings.Index(lower, key)
		if i < 0 {
			continue
		}
		v := text[i+len(key):]
		if key != "text:" {
			if sp := strings.IndexByte(v, ' '); sp >= 0 {
				v = v[:sp]
			}
		}
		fields[strings.TrimSuffix(key, ":")] = v
	}
	r.ID, r.Stat, r.Err = fields["id"], strings.ToUpper(fields["stat"]), fields["err"]
	if f, ok := d.OptionalParameters[pdu.TagReceiptedMessageID]; ok && f.String() != "" {
		r.ID = f.String()
	}
	if f, ok := d.OptionalParameters[pdu.TagMessageStateOption]; ok && len(f.Data) == 1 {
		if s, ok := messageStates[f.Data[0]]; ok {
			r.Stat = s
		}
	}
	if r.ID == "" || r.Stat == "" {
		return r, fmt.Errorf("smpp: a receipt without id or stat: %q", text)
	}
	return r, nil
}

// idForms are the ways an SMSC may write one message id: some answer submit_sm in hexadecimal
// and write receipts in decimal, or the other way round.
func idForms(id string) []string {
	forms := []string{id}
	if n, ok := new(big.Int).SetString(id, 10); ok {
		forms = append(forms, n.Text(16), strings.ToUpper(n.Text(16)))
	}
	if n, ok := new(big.Int).SetString(id, 16); ok {
		forms = append(forms, n.Text(10))
	}
	return forms
}

// deliver handles a deliver_sm and returns the status of its response: ESME_ROK once it is
// applied (or can never be), ESME_RX_T_APPN when it should be delivered again later.
func (c *Carrier) deliver(ctx context.Context, d *pdu.DeliverSM) data.CommandStatusType {
	if d.EsmClass&0x3C == data.SM_SMSC_DLV_RCPT_TYPE {
		return c.receipt(ctx, d)
	}
	return c.inbound(ctx, d)
}

// receipt applies one part's receipt and, once the message's fate is known, reports it: failed
// as soon as one part failed, delivered when every part was delivered.
func (c *Carrier) receipt(ctx context.Context, d *pdu.DeliverSM) data.CommandStatusType {
	log := c.cfg.Logger
	r, err := parseReceipt(d)
	if err != nil {
		log.Warn("smpp: unreadable receipt: dropped", "err", err)
		return data.ESME_ROK
	}
	state, known := receiptStates[r.Stat]
	if !known {
		state = receiptStates["UNKNOWN"]
	}
	if !state.final {
		return data.ESME_ROK
	}
	reason := state.reason
	if r.Stat == "UNDELIV" && undeliverableErrors[r.Err] != "" {
		reason = undeliverableErrors[r.Err]
	}
	key, err := c.lookup(ctx, r.ID)
	if err != nil {
		log.Warn("smpp: receipt for a message not (yet) known: the SMSC will deliver it again", "smsc_id", r.ID, "err", err)
		return data.ESME_RX_T_APPN
	}
	unlock := c.locks.lock(key.reference)
	defer unlock()
	now := c.cfg.Now().UTC()
	sub, parts, err := c.cfg.Store.FinishPart(ctx, key.reference, key.part, key.smscID, state.status, reason, now)
	if err != nil {
		log.Error("smpp: record receipt", "reference", key.reference, "err", err)
		return data.ESME_RX_T_APPN
	}
	if sub.ReportedAt != nil {
		return data.ESME_ROK // the message's fate is reported: a late part or a repeated receipt
	}
	rc := fate(parts)
	if rc == nil {
		return data.ESME_ROK // parts still to hear about
	}
	rc.Reference, rc.At = key.reference, now
	if err := c.report(ctx, carriers.Report{Carrier: Name, Receipt: rc}); err != nil {
		log.Warn("smpp: the core did not take a receipt: the SMSC will deliver it again", "reference", key.reference, "err", err)
		return data.ESME_RX_T_APPN
	}
	if err := c.cfg.Store.MarkReported(ctx, key.reference, now); err != nil {
		log.Error("smpp: record reported receipt", "reference", key.reference, "err", err)
	}
	return data.ESME_ROK
}

// fate is a message's receipt once its parts tell it, nil while they do not: the first failed
// part fails it; it is delivered when all are.
func fate(parts []Part) *carriers.Receipt {
	if len(parts) == 0 {
		return nil
	}
	rc := &carriers.Receipt{Status: carriers.ReceiptDelivered}
	if parts[0].SMSCID != nil {
		rc.CarrierID = *parts[0].SMSCID
	}
	delivered := 0
	for _, p := range parts {
		switch p.Status {
		case PartFailed:
			rc.Status, rc.FailureReason = carriers.ReceiptFailed, carriers.FailureUnknown
			if p.FailureReason != nil {
				rc.FailureReason = *p.FailureReason
			}
			return rc
		case PartDelivered:
			delivered++
		}
	}
	if delivered < len(parts) {
		return nil
	}
	return rc
}

// lookup finds the part an SMSC id names: among the parts accepted but not yet recorded, then in
// the store, a few times over (the submission may be recorded by another instance this moment).
func (c *Carrier) lookup(ctx context.Context, id string) (partKey, error) {
	forms := idForms(id)
	for attempt := 0; ; attempt++ {
		c.mu.Lock()
		for _, f := range forms {
			if k, ok := c.recent[f]; ok {
				c.mu.Unlock()
				k.smscID = f
				return k, nil
			}
		}
		c.mu.Unlock()
		p, err := c.cfg.Store.FindPart(ctx, forms)
		switch {
		case err != nil:
			return partKey{}, err
		case p != nil:
			return partKey{reference: p.Reference, part: p.Part, smscID: *p.SMSCID}, nil
		case attempt == 4:
			return partKey{}, errors.New("smpp: no part has SMSC id " + id)
		}
		select {
		case <-ctx.Done():
			return partKey{}, ctx.Err()
		case <-time.After(time.Duration(50<<attempt) * time.Millisecond):
		}
	}
}

// report hands a report to the core, trying again a few times before giving up.
func (c *Carrier) report(ctx context.Context, r carriers.Report) error {
	var err error
	for attempt := range 4 {
		if err = c.cfg.Reporter.Report(ctx, r); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(100<<attempt) * time.Millisecond):
		}
	}
	return err
}

// inboundStaleAfter is how long the parts of an inbound message wait for the rest.
const inboundStaleAfter = 24 * time.Hour

// inbound reports a message a handset sent (MO). Parts of a concatenated one are kept in the
// store until the last arrives, then reported as one message.
func (c *Carrier) inbound(ctx context.Context, d *pdu.DeliverSM) data.CommandStatusType {
	log := c.cfg.Logger
	body, err := decode(d)
	if err != nil {
		log.Warn("smpp: undecodable inbound message: dropped", "err", err, "data_coding", d.Message.Encoding().DataCoding())
		return data.ESME_ROK
	}
	from, to := number(d.SourceAddr), number(d.DestAddr)
	now := c.cfg.Now().UTC()
	total, part, ref, concatenated := concatInfo(d)
	if !concatenated || total <= 1 {
		in := &carriers.InboundMessage{CarrierID: kit.NewID("smppmo"), From: from, To: to, Body: body, At: now}
		if err := c.report(ctx, carriers.Report{Carrier: Name, Inbound: in}); err != nil {
			log.Warn("smpp: the core did not take an inbound message: the SMSC will deliver it again", "err", err)
			return data.ESME_RX_T_APPN
		}
		return data.ESME_ROK
	}
	key := fmt.Sprintf("%s|%s|%d|%d", from, to, ref, total)
	unlock := c.locks.lock(key)
	defer unlock()
	parts, err := c.cfg.Store.AddInboundPart(ctx, InboundPart{Source: from, Destination: to, ConcatRef: ref,
		Total: total, Part: part, Body: body, CreatedAt: now}, inboundStaleAfter)
	if err != nil {
		log.Error("smpp: keep an inbound part", "err", err)
		return data.ESME_RX_T_APPN
	}
	if len(parts) < total {
		return data.ESME_ROK
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Body)
	}
	// The same parts make the same id, so a message reported twice is stored once.
	sum := sha256.Sum256([]byte(key + "|" + parts[0].CreatedAt.UTC().Format(time.RFC3339Nano)))
	in := &carriers.InboundMessage{CarrierID: "smppmo_" + hex.EncodeToString(sum[:12]), From: from, To: to, Body: b.String(), At: now}
	if err := c.report(ctx, carriers.Report{Carrier: Name, Inbound: in}); err != nil {
		log.Warn("smpp: the core did not take an inbound message: the SMSC will deliver it again", "err", err)
		return data.ESME_RX_T_APPN
	}
	if err := c.cfg.Store.DeleteInbound(ctx, from, to, ref, total); err != nil {
		log.Error("smpp: forget a reported inbound message", "err", err)
	}
	return data.ESME_ROK
}

// decode returns the text of an inbound message, from short_message or the message_payload TLV,
// as its data_coding says: GSM-7 (one septet per octet), UCS-2, Latin-1 or ASCII.
func decode(d *pdu.DeliverSM) (string, error) {
	raw, _ := d.Message.GetMessageData()
	enc := d.Message.Encoding()
	if f, ok := d.OptionalParameters[pdu.TagMessagePayload]; ok && len(raw) == 0 {
		raw = f.Data
		if d.EsmClass&data.SM_UDH_GSM != 0 {
			var udh pdu.UDH
			if n, err := udh.UnmarshalBinary(raw); err == nil && n <= len(raw) {
				raw = raw[n:]
			}
		}
	}
	if enc == nil {
		enc = data.GSM7BIT
	}
	switch enc.DataCoding() {
	case data.GSM7BITCoding, data.UCS2Coding, data.LATIN1Coding, data.ASCIICoding:
	default:
		return "", fmt.Errorf("smpp: data_coding 0x%02X is not text", enc.DataCoding())
	}
	return enc.Decode(raw)
}

// concatInfo reads a concatenated part's position from its user data header (8- or 16-bit
// reference) or from the sar_* TLVs.
func concatInfo(d *pdu.DeliverSM) (total, part, ref int, ok bool) {
	udh := d.Message.UDH()
	if t, p, r, found := udh.GetConcatInfo(); found {
		return int(t), int(p), int(r), true
	}
	if ie, found := udh.FindInfoElement(data.UDH_CONCAT_MSG_16_BIT_REF); found && len(ie.Data) == 4 {
		return int(ie.Data[2]), int(ie.Data[3]), int(ie.Data[0])<<8 | int(ie.Data[1]), true
	}
	refTLV, ok1 := d.OptionalParameters[pdu.TagSarMsgRefNum]
	totTLV, ok2 := d.OptionalParameters[pdu.TagSarTotalSegments]
	seqTLV, ok3 := d.OptionalParameters[pdu.TagSarSegmentSeqnum]
	if ok1 && ok2 && ok3 && len(refTLV.Data) == 2 && len(totTLV.Data) == 1 && len(seqTLV.Data) == 1 {
		return int(totTLV.Data[0]), int(seqTLV.Data[0]), int(refTLV.Data[0])<<8 | int(refTLV.Data[1]), true
	}
	return 0, 0, 0, false
}
