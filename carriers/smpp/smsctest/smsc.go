// Package smsctest is a fake SMSC for tests and benchmarks of the SMPP adapter: an SMPP 3.4
// server on a loopback port, built on gosmpp's PDU types, that accepts transceiver binds and
// submit_sm, answers each part with a delivery receipt (delivered, or the failure its Config
// chooses), sends inbound (MO) messages, stores and forwards its deliver_sm until the ESME
// acknowledges them, and can drop the connection mid-stream.
//
// It is no SMSC to run in production: it keeps everything in memory and routes nothing.
package smsctest

import (
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/linxGnu/gosmpp/data"
	"github.com/linxGnu/gosmpp/pdu"
)

// Config configures the fake SMSC.
type Config struct {
	// SystemID and Password are the credentials a bind must present. Defaults "test", "secret".
	SystemID, Password string
	// ReceiptDelay is how long after accepting a part its receipt is sent. Defaults to 5 ms.
	ReceiptDelay time.Duration
	// Outcome chooses a part's receipt: its stat (DELIVRD, UNDELIV, REJECTD, EXPIRED, ...) and
	// err. Defaults to DELIVRD, err 000. An empty stat sends no receipt.
	Outcome func(Part) (stat, errCode string)
	// Refuse chooses the submit_sm_resp status of a part; ESME_ROK accepts it. Defaults to
	// accepting every part.
	Refuse func(Part) data.CommandStatusType
	// Redeliver is how long a deliver_sm the ESME did not acknowledge waits before it is sent
	// again. Defaults to 100 ms.
	Redeliver time.Duration
	// ResponseDelay holds every submit_sm_resp back this long (answering out of order), so that
	// the ESME's window fills. Defaults to 0: each is answered as it is read.
	ResponseDelay time.Duration
}

// Part is a submit_sm the SMSC accepted (or is asked about, in Config.Refuse).
type Part struct {
	// ID is the SMSC's message id of the part.
	ID string
	// From and To are the addresses, E.164 with "+" when international.
	From, To string
	// DataCoding is 0x00 (GSM-7) or 0x08 (UCS-2); Text is the decoded payload.
	DataCoding byte
	Text       string
	// Ref, Total and Seq come from the concatenation header; 0, 1, 1 for a single part.
	Ref, Total, Seq int
	// RegisteredDelivery is the receipt the ESME asked for.
	RegisteredDelivery byte
	At                 time.Time
}

// Message is the accepted parts of one message, reassembled.
type Message struct {
	From, To string
	Text     string
	// Parts is how many parts were accepted; Complete says all of Total arrived.
	Parts, Total int
	Complete     bool
	IDs          []string
}

// SMSC is the fake SMSC.
type SMSC struct {
	cfg Config
	ln  net.Listener

	mu       sync.Mutex
	conn     *conn
	parts    []Part
	nextID   int
	binds    int
	submits  int
	dropAt   int
	queue    []*delivery
	inflight map[int32]*delivery
	closed   bool
	wake     chan struct{}
	// outstanding counts submit_sm read and not yet answered; maxOutstanding is its peak.
	outstanding, maxOutstanding int
	enquireLinks                int
	wg                          sync.WaitGroup
}

// delivery is a deliver_sm to send until acknowledged.
type delivery struct {
	p        *pdu.DeliverSM
	notUntil time.Time
}

type conn struct {
	net.Conn
	wmu sync.Mutex
}

func (c *conn) write(p pdu.PDU) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	b := pdu.NewBuffer(make([]byte, 0, 64))
	p.Marshal(b)
	_, err := c.Write(b.Bytes())
	return err
}

// Start listens on a free loopback port and serves until Close.
func Start(cfg Config) (*SMSC, error) {
	if cfg.SystemID == "" {
		cfg.SystemID = "test"
	}
	if cfg.Password == "" {
		cfg.Password = "secret"
	}
	if cfg.ReceiptDelay == 0 {
		cfg.ReceiptDelay = 5 * time.Millisecond
	}
	if cfg.Redeliver == 0 {
		cfg.Redeliver = 100 * time.Millisecond
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &SMSC{cfg: cfg, ln: ln, inflight: map[int32]*delivery{}, wake: make(chan struct{}, 1), nextID: 100000}
	s.wg.Add(2)
	go s.accept()
	go s.forward()
	return s, nil
}

// Addr is the SMSC's host:port.
func (s *SMSC) Addr() string { return s.ln.Addr().String() }

// Close stops the SMSC.
func (s *SMSC) Close() {
	s.mu.Lock()
	s.closed = true
	c := s.conn
	s.mu.Unlock()
	_ = s.ln.Close()
	if c != nil {
		_ = c.Close()
	}
	s.poke()
	s.wg.Wait()
}

// Binds counts the successful binds so far.
func (s *SMSC) Binds() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.binds
}

// Bound says whether an ESME is bound now.
func (s *SMSC) Bound() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn != nil
}

// Drop closes the ESME's connection now, as a network failure would.
func (s *SMSC) Drop() {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		s.hangUp(c)
	}
}

// DropAfter drops the connection when it receives the n-th submit_sm from now, which it does not
// accept: submit_sm received after the drop are never answered, so the ESME must send them again.
func (s *SMSC) DropAfter(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropAt = s.submits + n
}

// Parts returns the parts accepted so far, in order.
func (s *SMSC) Parts() []Part {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Part(nil), s.parts...)
}

// Messages returns the accepted parts reassembled into messages, in the order of their first part.
func (s *SMSC) Messages() []Message {
	type key struct {
		from, to   string
		ref, total int
	}
	var order []key
	byKey := map[key]map[int]Part{}
	for _, p := range s.Parts() {
		k := key{p.From, p.To, p.Ref, p.Total}
		if p.Total <= 1 {
			k.ref = -len(order) - 1 // every single part is a message of its own
		}
		if byKey[k] == nil {
			byKey[k] = map[int]Part{}
			order = append(order, k)
		}
		if _, dup := byKey[k][p.Seq]; dup {
			// the same part accepted twice: a new message as far as the handset can tell
			k.ref = -len(order) - 1
			byKey[k] = map[int]Part{}
			order = append(order, k)
		}
		byKey[k][p.Seq] = p
	}
	out := make([]Message, 0, len(order))
	for _, k := range order {
		m := Message{From: k.from, To: k.to, Total: max(1, k.total), Parts: len(byKey[k])}
		var b strings.Builder
		for seq := 1; seq <= m.Total; seq++ {
			if p, ok := byKey[k][seq]; ok {
				b.WriteString(p.Text)
				m.IDs = append(m.IDs, p.ID)
			}
		}
		m.Text, m.Complete = b.String(), m.Parts == m.Total
		out = append(out, m)
	}
	return out
}

// SendMO sends a message from a handset (from) to one of the ESME's numbers (to): GSM-7 when
// every character has a septet, else UCS-2, in concatenated parts when it is long. It returns at
// once; the SMSC sends it again until the ESME acknowledges every part.
func (s *SMSC) SendMO(from, to, text string) error {
	enc := data.GSM7BIT
	if _, err := data.GSM7BIT.Encode(text); err != nil {
		enc = data.UCS2
	}
	msgs, err := pdu.NewLongMessageWithEncoding(text, enc)
	if err != nil {
		return err
	}
	for _, sm := range msgs {
		d := pdu.NewDeliverSM().(*pdu.DeliverSM)
		if d.SourceAddr, err = address(from); err != nil {
			return err
		}
		if d.DestAddr, err = address(to); err != nil {
			return err
		}
		d.Message = *sm
		if len(msgs) > 1 {
			d.EsmClass |= data.SM_UDH_GSM
		}
		s.enqueue(d, 0)
	}
	return nil
}

func address(n string) (pdu.Address, error) {
	if d, ok := strings.CutPrefix(n, "+"); ok {
		return pdu.NewAddressWithTonNpiAddr(data.GSM_TON_INTERNATIONAL, data.GSM_NPI_E164, d)
	}
	return pdu.NewAddressWithTonNpiAddr(data.GSM_TON_NETWORK, data.GSM_NPI_UNKNOWN, n)
}

func number(a pdu.Address) string {
	if a.Ton() == data.GSM_TON_INTERNATIONAL {
		return "+" + a.Address()
	}
	return a.Address()
}

func (s *SMSC) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go s.serve(&conn{Conn: nc})
	}
}

// hangUp closes a connection the way a failing peer does, but after letting the ESME read what
// was already answered: it stops writing, discards what still comes, then closes.
func (s *SMSC) hangUp(c *conn) {
	s.mu.Lock()
	if s.conn == c {
		s.conn = nil
		for seq, d := range s.inflight {
			s.queue = append(s.queue, d)
			delete(s.inflight, seq)
		}
	}
	s.mu.Unlock()
	c.wmu.Lock()
	if tc, ok := c.Conn.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	c.wmu.Unlock()
	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = c.Close()
	}()
}

func (s *SMSC) serve(c *conn) {
	defer s.wg.Done()
	defer s.hangUp(c)
	bound := false
	for {
		p, err := pdu.Parse(c)
		if err != nil {
			return
		}
		s.mu.Lock()
		current := s.conn == c
		s.mu.Unlock()
		if bound && !current {
			continue // hung up: discard what still comes
		}
		switch p := p.(type) {
		case *pdu.BindRequest:
			resp := pdu.NewBindResp(*p)
			if p.BindingType != pdu.Transceiver || p.SystemID != s.cfg.SystemID {
				resp.CommandStatus = data.ESME_RINVSYSID
			} else if p.Password != s.cfg.Password {
				resp.CommandStatus = data.ESME_RINVPASWD
			}
			resp.SystemID = "smsctest"
			if err := c.write(resp); err != nil || resp.CommandStatus != data.ESME_ROK {
				return
			}
			s.mu.Lock()
			old := s.conn
			s.conn, bound = c, true
			s.binds++
			s.mu.Unlock()
			if old != nil {
				s.hangUp(old)
			}
			s.poke()
		case *pdu.SubmitSM:
			if !bound {
				return
			}
			s.mu.Lock()
			s.outstanding++
			s.maxOutstanding = max(s.maxOutstanding, s.outstanding)
			s.mu.Unlock()
			if s.cfg.ResponseDelay > 0 {
				go func() {
					time.Sleep(s.cfg.ResponseDelay)
					s.submit(c, p)
				}()
			} else {
				s.submit(c, p)
			}
		case *pdu.DeliverSMResp:
			s.mu.Lock()
			d, ok := s.inflight[p.SequenceNumber]
			delete(s.inflight, p.SequenceNumber)
			if ok && p.CommandStatus != data.ESME_ROK {
				d.notUntil = time.Now().Add(s.cfg.Redeliver)
				s.queue = append(s.queue, d)
			}
			s.mu.Unlock()
			s.poke()
		case *pdu.EnquireLink:
			s.mu.Lock()
			s.enquireLinks++
			s.mu.Unlock()
			_ = c.write(p.GetResponse())
		case *pdu.Unbind:
			_ = c.write(p.GetResponse())
			return
		default:
			if p.CanResponse() {
				_ = c.write(p.GetResponse())
			}
		}
	}
}

// submit answers a submit_sm: refused, accepted with a receipt to come, or (when a drop is due)
// not at all.
func (s *SMSC) submit(c *conn, p *pdu.SubmitSM) {
	part := Part{From: number(p.SourceAddr), To: number(p.DestAddr), DataCoding: p.Message.Encoding().DataCoding(),
		Total: 1, Seq: 1, RegisteredDelivery: p.RegisteredDelivery, At: time.Now()}
	part.Text, _ = p.Message.GetMessage()
	if t, seq, ref, ok := p.Message.UDH().GetConcatInfo(); ok {
		part.Total, part.Seq, part.Ref = int(t), int(seq), int(ref)
	}
	s.mu.Lock()
	s.outstanding--
	s.submits++
	if s.dropAt > 0 && s.submits >= s.dropAt {
		s.dropAt = 0
		s.mu.Unlock()
		s.hangUp(c)
		return
	}
	s.nextID++
	part.ID = fmt.Sprintf("%d", s.nextID)
	s.mu.Unlock()
	resp := p.GetResponse().(*pdu.SubmitSMResp)
	if s.cfg.Refuse != nil {
		resp.CommandStatus = s.cfg.Refuse(part)
	}
	if resp.CommandStatus == data.ESME_ROK {
		resp.MessageID = part.ID
	}
	if resp.CommandStatus != data.ESME_ROK {
		_ = c.write(resp)
		return
	}
	// Recorded before it is answered, so the ESME never sees an acceptance the SMSC has not made;
	// unrecorded when the answer cannot be written.
	s.mu.Lock()
	s.parts = append(s.parts, part)
	s.mu.Unlock()
	if err := c.write(resp); err != nil {
		s.mu.Lock()
		s.parts = slices.DeleteFunc(s.parts, func(p Part) bool { return p.ID == part.ID })
		s.mu.Unlock()
		return
	}
	if part.RegisteredDelivery&0x03 == 0 {
		return
	}
	stat, errCode := "DELIVRD", "000"
	if s.cfg.Outcome != nil {
		stat, errCode = s.cfg.Outcome(part)
	}
	if stat == "" {
		return
	}
	s.enqueue(Receipt(part, stat, errCode), s.cfg.ReceiptDelay)
}

// Receipt builds the deliver_sm that reports a part's fate, in the text format of SMPP 3.4
// appendix B.
func Receipt(p Part, stat, errCode string) *pdu.DeliverSM {
	d := pdu.NewDeliverSM().(*pdu.DeliverSM)
	d.SourceAddr, _ = address(p.To)
	d.DestAddr, _ = address(p.From)
	d.EsmClass = data.SM_SMSC_DLV_RCPT_TYPE
	dlvrd := "000"
	if stat == "DELIVRD" {
		dlvrd = "001"
	}
	now := time.Now().UTC().Format("0601021504")
	text := p.Text
	if len(text) > 20 {
		text = text[:20]
	}
	body := fmt.Sprintf("id:%s sub:001 dlvrd:%s submit date:%s done date:%s stat:%s err:%s text:%s",
		p.ID, dlvrd, p.At.UTC().Format("0601021504"), now, stat, errCode, asciiOnly(text))
	_ = d.Message.SetMessageWithEncoding(body, data.ASCII)
	return d
}

func asciiOnly(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7E {
			return '.'
		}
		return r
	}, s)
}

// enqueue stores a deliver_sm to forward after delay.
func (s *SMSC) enqueue(d *pdu.DeliverSM, delay time.Duration) {
	s.mu.Lock()
	s.queue = append(s.queue, &delivery{p: d, notUntil: time.Now().Add(delay)})
	s.mu.Unlock()
	s.poke()
}

func (s *SMSC) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// MaxOutstanding is the most submit_sm the ESME had awaiting an answer at once.
func (s *SMSC) MaxOutstanding() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxOutstanding
}

// EnquireLinks counts the enquire_link received.
func (s *SMSC) EnquireLinks() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enquireLinks
}

// SendReceipt sends a receipt for an accepted part now, such as one whose Outcome sent none.
func (s *SMSC) SendReceipt(p Part, stat, errCode string) {
	s.enqueue(Receipt(p, stat, errCode), 0)
}

// Pending counts the deliver_sm not yet acknowledged.
func (s *SMSC) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) + len(s.inflight)
}

// forward sends the queued deliver_sm that are due over the bound connection.
func (s *SMSC) forward() {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return
		}
		c := s.conn
		var due []*delivery
		next := time.Now().Add(50 * time.Millisecond)
		if c != nil {
			keep := s.queue[:0]
			for _, d := range s.queue {
				if !d.notUntil.After(time.Now()) {
					due = append(due, d)
				} else {
					keep = append(keep, d)
					next = minTime(next, d.notUntil)
				}
			}
			s.queue = keep
			for _, d := range due {
				d.p.AssignSequenceNumber()
				s.inflight[d.p.SequenceNumber] = d
			}
		}
		s.mu.Unlock()
		for _, d := range due {
			if err := c.write(d.p); err != nil && !errors.Is(err, io.EOF) {
				break // the hang-up requeues what is in flight
			}
		}
		select {
		case <-s.wake:
		case <-time.After(time.Until(next)):
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
