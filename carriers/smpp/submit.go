package smpp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode/utf16"

	"github.com/linxGnu/gosmpp/data"
	"github.com/linxGnu/gosmpp/pdu"
	"golang.org/x/sync/errgroup"

	"github.com/switchboard/switchboard/carriers"
)

// Part sizes, as the core counts segments: GSM-7 160 septets alone or 153 per part of a long
// message (a 6-octet concatenation header takes the rest), UCS-2 70 UTF-16 units or 67.
const (
	gsmSingle = 160
	gsmPart   = 153
	ucsSingle = 70
	ucsPart   = 67
	// maxParts is what the 8-bit concatenation header can number.
	maxParts = 255
)

// Registered delivery: ask the SMSC for a receipt of every part, delivered or failed.
const registeredDelivery = 0x01

// Submit sends a message as one submit_sm per part and returns once the SMSC accepted every
// part; the SMSC id of the first part is the message's carrier id. Each part's id is recorded as
// it is accepted, so a repeated Reference sends only the parts never accepted (none: Duplicate)
// and keeps the concatenation reference of the first attempt. Parts of one message are sent
// together, within the window shared by all submissions, at the configured throughput; a part
// whose bind drops before its response is sent again on the next bind.
func (c *Carrier) Submit(ctx context.Context, m carriers.Outbound) (carriers.Submission, error) {
	if m.Reference == "" {
		return carriers.Submission{}, &carriers.SubmitError{Permanent: true, Reason: carriers.FailureUnknown, Err: errors.New("smpp: no reference")}
	}
	if len(m.Media) > 0 {
		return carriers.Submission{}, &carriers.SubmitError{Permanent: true, Reason: carriers.FailureUnknown,
			Err: errors.New("smpp: SMPP carries text only, not media (MMS)")}
	}
	src, err := address(m.From)
	if err != nil {
		return carriers.Submission{}, &carriers.SubmitError{Permanent: true, Reason: carriers.FailureUnknown, Err: err}
	}
	dst, err := address(m.To)
	if err != nil {
		return carriers.Submission{}, &carriers.SubmitError{Permanent: true, Reason: carriers.FailureInvalidMobileNumber, Err: err}
	}
	enc, payloads := split(m.Body, m.Encoding)
	if len(payloads) > maxParts {
		return carriers.Submission{}, &carriers.SubmitError{Permanent: true, Reason: carriers.FailureUnknown,
			Err: fmt.Errorf("smpp: %d parts exceed the %d a concatenated message can have", len(payloads), maxParts)}
	}
	if m.Segments > 0 && m.Segments != len(payloads) {
		c.cfg.Logger.Warn("smpp: the message splits into another number of parts than the core counted",
			"reference", m.Reference, "parts", len(payloads), "segments", m.Segments)
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.SubmitTimeout)
	defer cancel()
	unlock := c.locks.lock(m.Reference)
	defer unlock()
	sub, parts, err := c.cfg.Store.BeginSubmission(ctx, Submission{Reference: m.Reference,
		ConcatRef: rand.IntN(256), Parts: len(payloads), CreatedAt: c.cfg.Now().UTC()})
	if err != nil {
		return carriers.Submission{}, &carriers.SubmitError{Reason: carriers.FailureUnknown, Err: err}
	}
	if sub.Parts != len(payloads) {
		return carriers.Submission{}, &carriers.SubmitError{Permanent: true, Reason: carriers.FailureUnknown,
			Err: fmt.Errorf("smpp: reference %s was submitted before with %d parts, now %d", m.Reference, sub.Parts, len(payloads))}
	}
	ids := make([]string, len(parts))
	sent := 0
	g, gctx := errgroup.WithContext(ctx)
	for i, p := range parts {
		if p.SMSCID != nil {
			ids[i] = *p.SMSCID
			continue
		}
		sent++
		g.Go(func() error {
			build := func() *pdu.SubmitSM {
				s := pdu.NewSubmitSM().(*pdu.SubmitSM)
				s.SourceAddr, s.DestAddr, s.RegisteredDelivery = src, dst, registeredDelivery
				_ = s.Message.SetMessageDataWithEncoding(payloads[i], enc)
				if len(payloads) > 1 {
					s.EsmClass |= data.SM_UDH_GSM
					s.Message.SetUDH(pdu.UDH{pdu.NewIEConcatMessage(uint8(len(payloads)), uint8(i+1), uint8(sub.ConcatRef))})
				}
				return s
			}
			id, err := c.submitPart(gctx, partKey{reference: m.Reference, part: p.Part}, build)
			if err != nil {
				return err
			}
			ids[i] = id
			if err := c.cfg.Store.SetPartID(context.WithoutCancel(ctx), m.Reference, p.Part, id); err != nil {
				return &carriers.SubmitError{Reason: carriers.FailureUnknown, Err: err}
			}
			c.mu.Lock()
			delete(c.recent, id)
			c.mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return carriers.Submission{}, err
	}
	return carriers.Submission{CarrierID: ids[0], Duplicate: sent == 0}, nil
}

// submitPart sends one submit_sm and returns the SMSC's id for it, sending it again on the next
// bind when the bind drops before the response.
func (c *Carrier) submitPart(ctx context.Context, key partKey, build func() *pdu.SubmitSM) (string, error) {
	temporary := func(err error) error {
		return &carriers.SubmitError{Reason: carriers.FailureUnknown, Err: err}
	}
	for {
		if c.limiter != nil {
			if err := c.limiter.Wait(ctx); err != nil {
				return "", temporary(fmt.Errorf("smpp: throttled past the submit timeout: %w", err))
			}
		}
		select {
		case c.window <- struct{}{}:
		case <-ctx.Done():
			return "", temporary(errors.New("smpp: the window stayed full past the submit timeout"))
		}
		b, err := c.waitBound(ctx)
		if err != nil {
			<-c.window
			return "", temporary(err)
		}
		p := build()
		ch := make(chan submitResult, 1)
		c.mu.Lock()
		c.pending[p.SequenceNumber] = &pendingPart{key: key, b: b, ch: ch}
		c.mu.Unlock()
		sess := b.sess.Load()
		if err := sess.Transceiver().Submit(p); err != nil {
			c.mu.Lock()
			delete(c.pending, p.SequenceNumber)
			c.mu.Unlock()
			<-c.window
			c.setUnbound(b)
			continue
		}
		var r submitResult
		select {
		case r = <-ch:
		case <-ctx.Done():
			c.mu.Lock()
			delete(c.pending, p.SequenceNumber)
			c.mu.Unlock()
			<-c.window
			return "", temporary(errors.New("smpp: no submit_sm_resp before the submit timeout"))
		}
		<-c.window
		switch {
		case r.lost:
			continue
		case r.status != data.ESME_ROK:
			return "", refusal(r.status)
		}
		return r.id, nil
	}
}

// refusal maps a submit_sm_resp's error status to a SubmitError: the SMSC's temporary states
// (busy, throttled, queue full, system error) are retried by the core; other refusals fail the
// message, an invalid destination as invalid_mobile_number.
func refusal(status data.CommandStatusType) error {
	err := fmt.Errorf("smpp: submit_sm refused: %s (0x%08X)", status.Desc(), uint32(status))
	switch status {
	case data.ESME_RTHROTTLED, data.ESME_RMSGQFUL, data.ESME_RSYSERR, data.ESME_RX_T_APPN, data.ESME_RSUBMITFAIL:
		return &carriers.SubmitError{Reason: carriers.FailureUnknown, Err: err}
	case data.ESME_RINVDSTADR, data.ESME_RINVDSTTON, data.ESME_RINVDSTNPI:
		return &carriers.SubmitError{Permanent: true, Reason: carriers.FailureInvalidMobileNumber, Err: err}
	}
	return &carriers.SubmitError{Permanent: true, Reason: carriers.FailureUnknown, Err: err}
}

// address converts our number to an SMPP address: E.164 as international ISDN (TON 1, NPI 1)
// without its "+", a short code as network-specific (TON 3).
func address(number string) (pdu.Address, error) {
	digits, international := strings.CutPrefix(number, "+")
	if digits == "" || strings.Trim(digits, "0123456789") != "" || len(digits) > 20 {
		return pdu.Address{}, fmt.Errorf("smpp: %q is neither an E.164 number nor a short code", number)
	}
	if international {
		return pdu.NewAddressWithTonNpiAddr(data.GSM_TON_INTERNATIONAL, data.GSM_NPI_E164, digits)
	}
	return pdu.NewAddressWithTonNpiAddr(data.GSM_TON_NETWORK, data.GSM_NPI_UNKNOWN, digits)
}

// number is address's inverse for what the SMSC sends.
func number(a pdu.Address) string {
	if a.Ton() == data.GSM_TON_INTERNATIONAL && !strings.HasPrefix(a.Address(), "+") {
		return "+" + a.Address()
	}
	return a.Address()
}

// split encodes a body as the payloads of its parts: GSM-7 (data_coding 0x00, one septet per
// octet as SMPP carries it) when the core counted it so and every character has a septet, else
// UCS-2 (data_coding 0x08). Parts are cut as the core counts them: an escaped GSM-7 character or
// a UTF-16 surrogate pair is never split between two parts.
func split(body, encoding string) (data.Encoding, [][]byte) {
	if encoding != "ucs2" {
		if units, ok := gsmUnits(body); ok {
			return data.GSM7BIT, cut(body, units, gsmSingle, gsmPart, func(s string) []byte {
				b, _ := data.GSM7BIT.Encode(s)
				return b
			})
		}
	}
	units := make([]int, 0, len(body))
	for _, r := range body {
		units = append(units, max(1, utf16.RuneLen(r)))
	}
	return data.UCS2, cut(body, units, ucsSingle, ucsPart, func(s string) []byte {
		b, _ := data.UCS2.Encode(s)
		return b
	})
}

// gsmUnits returns the septets of each character, or false when one has none.
func gsmUnits(body string) ([]int, bool) {
	units := make([]int, 0, len(body))
	for _, r := range body {
		b, err := data.GSM7BIT.Encode(string(r))
		if err != nil || len(b) == 0 {
			return nil, false
		}
		units = append(units, len(b))
	}
	return units, true
}

// cut splits body (whose characters cost units each) into parts of at most single units when it
// fits in one, else of at most part units, and encodes each.
func cut(body string, units []int, single, part int, encode func(string) []byte) [][]byte {
	runes := []rune(body)
	total := 0
	for _, u := range units {
		total += u
	}
	if total <= single {
		return [][]byte{encode(body)}
	}
	var out [][]byte
	start, used := 0, 0
	for i, u := range units {
		if used+u > part {
			out = append(out, encode(string(runes[start:i])))
			start, used = i, 0
		}
		used += u
	}
	return append(out, encode(string(runes[start:])))
}
