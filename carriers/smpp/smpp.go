// Package smpp is the SMPP 3.4 carrier adapter: an ESME that binds to an operator's SMSC as a
// transceiver (github.com/linxGnu/gosmpp), keeps the bind alive with enquire_link and binds again
// with backoff when it drops, submits messages as submit_sm in a window of outstanding requests at
// a throttled rate (long ones as concatenated parts with a user data header, GSM-7 or UCS-2), and
// turns the SMSC's deliver_sm into delivery receipts and inbound messages for the core.
//
// Besides messaging it keeps the route's inventory of numbers, which the operator lists, and a
// registry that imports campaigns by TCR id (numbers.go, campaigns.go). Its state (the
// SMSC message id of every part of every submission, the parts of inbound messages still being
// reassembled) lives in the store's smpp_* tables, so receipts resolve after a restart.
package smpp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linxGnu/gosmpp"
	"github.com/linxGnu/gosmpp/data"
	"github.com/linxGnu/gosmpp/pdu"
	"golang.org/x/time/rate"

	"github.com/switchboard/switchboard/carriers"
)

// Name is the adapter's name.
const Name = "smpp"

// Config configures the SMPP adapter.
type Config struct {
	// Addr is the SMSC's host:port. Required.
	Addr string
	// SystemID and Password authenticate the bind. SystemID is required.
	SystemID, Password string
	// SystemType is sent in the bind when the SMSC wants one. Defaults to empty.
	SystemType string
	// Store keeps the submissions' part ids and inbound parts (store.SMPPStore). Required.
	Store Store
	// Reporter receives receipts and inbound messages. Required.
	Reporter carriers.Reporter
	// Window is how many submit_sm may await their response at once. Defaults to 10.
	Window int
	// Throughput caps submit_sm per second (each part counts). Defaults to 0: no cap but the
	// window's (and the SMSC's throttling answers, which are retried).
	Throughput float64
	// EnquireLink is the interval of enquire_link on an idle bind. Defaults to 30 s.
	EnquireLink time.Duration
	// ReconnectMin and ReconnectMax bound the backoff between bind attempts, which doubles from
	// the first to the second. Default 500 ms and 30 s.
	ReconnectMin, ReconnectMax time.Duration
	// SubmitTimeout bounds one Submit (waiting for a bind, the window and the responses); past
	// it the submission fails temporarily and the core retries it. Defaults to 30 s.
	SubmitTimeout time.Duration
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default(). The password is never logged.
	Logger *slog.Logger
}

// Carrier is the SMPP adapter. Build it with New, then Start it; Close unbinds.
type Carrier struct {
	cfg     Config
	limiter *rate.Limiter
	window  chan struct{}
	// handlers bounds the deliver_sm handled at once.
	handlers chan struct{}
	locks    keyedMutex

	mu      sync.Mutex
	current *binding
	// bound is closed while a bind is up; Submit waits on it.
	bound   chan struct{}
	pending map[int32]*pendingPart
	// recent maps the SMSC ids of parts accepted but not yet recorded to their part, for a
	// receipt that overtakes the record.
	recent map[string]partKey

	startOnce sync.Once
	cancel    context.CancelFunc
	done      chan struct{}
	wg        sync.WaitGroup
}

// binding is one bound session.
type binding struct {
	sess atomic.Pointer[gosmpp.Session]
}

// partKey names a part of a submission; smscID is the SMSC's id of it, once known.
type partKey struct {
	reference string
	part      int
	smscID    string
}

// pendingPart is a submit_sm awaiting its response.
type pendingPart struct {
	key partKey
	b   *binding
	ch  chan submitResult
}

type submitResult struct {
	id     string
	status data.CommandStatusType
	// lost says the bind dropped before the response came.
	lost bool
}

// New returns the adapter; it does not connect before Start.
func New(cfg Config) (*Carrier, error) {
	switch {
	case cfg.Store == nil || cfg.Reporter == nil:
		return nil, errors.New("smpp: Config needs Store and Reporter")
	case cfg.Addr == "":
		return nil, errors.New("smpp: Config needs Addr (the SMSC's host:port)")
	case cfg.SystemID == "":
		return nil, errors.New("smpp: Config needs SystemID")
	case cfg.Window < 0 || cfg.Window > 255:
		return nil, fmt.Errorf("smpp: Window %d is not between 1 and 255", cfg.Window)
	case cfg.Throughput < 0:
		return nil, fmt.Errorf("smpp: Throughput %g is negative", cfg.Throughput)
	}
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		return nil, fmt.Errorf("smpp: Addr %q is not host:port", cfg.Addr)
	}
	if cfg.Window == 0 {
		cfg.Window = 10
	}
	if cfg.EnquireLink <= 0 {
		cfg.EnquireLink = 30 * time.Second
	}
	if cfg.ReconnectMin <= 0 {
		cfg.ReconnectMin = 500 * time.Millisecond
	}
	if cfg.ReconnectMax < cfg.ReconnectMin {
		cfg.ReconnectMax = max(30*time.Second, cfg.ReconnectMin)
	}
	if cfg.SubmitTimeout <= 0 {
		cfg.SubmitTimeout = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &Carrier{cfg: cfg, window: make(chan struct{}, cfg.Window), handlers: make(chan struct{}, 16),
		bound: make(chan struct{}), pending: map[int32]*pendingPart{}, recent: map[string]partKey{},
		done: make(chan struct{})}
	if cfg.Throughput > 0 {
		c.limiter = rate.NewLimiter(rate.Limit(cfg.Throughput), 1)
	}
	c.cfg.Logger = cfg.Logger.With("carrier", Name, "smsc", cfg.Addr, "system_id", cfg.SystemID)
	return c, nil
}

// Name reports "smpp".
func (c *Carrier) Name() string { return Name }

// Start binds to the SMSC in the background and keeps the bind up until Close, binding again
// with backoff whenever it drops. Calling it again does nothing.
func (c *Carrier) Start() {
	c.startOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		c.cancel = cancel
		go func() {
			defer close(c.done)
			c.run(ctx)
		}()
	})
}

// Close unbinds and waits for the deliver_sm being handled.
func (c *Carrier) Close() error {
	c.startOnce.Do(func() { close(c.done) }) // never started
	if c.cancel != nil {
		c.cancel()
	}
	<-c.done
	c.wg.Wait()
	return nil
}

// Bound reports whether a bind is up.
func (c *Carrier) Bound() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.current != nil
}

// Window reports how many submit_sm await their response and how many may at once.
func (c *Carrier) Window() (inUse, size int) { return len(c.window), cap(c.window) }

// run binds, waits for the bind to drop, and binds again, until ctx ends.
func (c *Carrier) run(ctx context.Context) {
	log := c.cfg.Logger
	backoff := c.cfg.ReconnectMin
	for ctx.Err() == nil {
		b := &binding{}
		closed := make(chan struct{})
		var once sync.Once
		settings := gosmpp.Settings{
			ReadTimeout:  c.cfg.EnquireLink + 10*time.Second,
			WriteTimeout: 10 * time.Second,
			EnquireLink:  c.cfg.EnquireLink,
			OnAllPDU:     func(p pdu.PDU) (pdu.PDU, bool) { return c.onPDU(b, p) },
			OnReceivingError: func(err error) {
				if ctx.Err() == nil {
					log.Warn("smpp: bind lost", "err", err)
				}
			},
			OnSubmitError: func(p pdu.PDU, err error) { log.Warn("smpp: write failed", "err", err) },
			OnClosed:      func(gosmpp.State) { once.Do(func() { close(closed) }) },
		}
		auth := gosmpp.Auth{SMSC: c.cfg.Addr, SystemID: c.cfg.SystemID, Password: c.cfg.Password, SystemType: c.cfg.SystemType}
		sess, err := gosmpp.NewSession(gosmpp.TRXConnector(dialer, auth), settings, -1)
		if err != nil {
			wait := backoff/2 + rand.N(backoff/2+1)
			log.Warn("smpp: bind failed", "err", err, "retry_in", wait)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			backoff = min(2*backoff, c.cfg.ReconnectMax)
			continue
		}
		backoff = c.cfg.ReconnectMin
		b.sess.Store(sess)
		c.setBound(b)
		log.Info("smpp: bound as transceiver")
		select {
		case <-closed:
		case <-ctx.Done():
			_ = sess.Close()
			log.Info("smpp: unbound")
		}
		c.setUnbound(b)
	}
}

// dialer connects with a deadline that also bounds the bind exchange (gosmpp waits for the
// bind_resp without one); the session replaces it with its own read and write timeouts.
func dialer(addr string) (net.Conn, error) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(15 * time.Second))
	return conn, nil
}

func (c *Carrier) setBound(b *binding) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.current = b
	close(c.bound)
}

// setUnbound forgets a dropped bind: the submit_sm still awaiting a response on it are lost and
// are sent again on the next bind.
func (c *Carrier) setUnbound(b *binding) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.current == b {
		c.current = nil
		c.bound = make(chan struct{})
	}
	for seq, p := range c.pending {
		if p.b == b {
			p.ch <- submitResult{lost: true}
			delete(c.pending, seq)
		}
	}
}

// waitBound returns the current bind, waiting for one until ctx ends.
func (c *Carrier) waitBound(ctx context.Context) (*binding, error) {
	for {
		c.mu.Lock()
		b, ready := c.current, c.bound
		c.mu.Unlock()
		if b != nil {
			return b, nil
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, errors.New("smpp: not bound to the SMSC")
		}
	}
}

// onPDU handles what the SMSC sends, on the session's reading goroutine: responses complete
// their submission at once; a deliver_sm is handled on its own goroutine and answered when done.
func (c *Carrier) onPDU(b *binding, p pdu.PDU) (pdu.PDU, bool) {
	switch p := p.(type) {
	case *pdu.SubmitSMResp:
		c.mu.Lock()
		if pp, ok := c.pending[p.SequenceNumber]; ok {
			delete(c.pending, p.SequenceNumber)
			if p.CommandStatus == data.ESME_ROK {
				c.recent[p.MessageID] = pp.key
			}
			pp.ch <- submitResult{id: p.MessageID, status: p.CommandStatus}
		}
		c.mu.Unlock()
		return nil, false
	case *pdu.GenericNack:
		c.mu.Lock()
		if pp, ok := c.pending[p.SequenceNumber]; ok {
			delete(c.pending, p.SequenceNumber)
			pp.ch <- submitResult{status: p.CommandStatus}
		}
		c.mu.Unlock()
		return nil, false
	case *pdu.DeliverSM:
		c.handlers <- struct{}{}
		c.wg.Add(1)
		go func() {
			defer func() { <-c.handlers; c.wg.Done() }()
			resp := p.GetResponse()
			resp.(*pdu.DeliverSMResp).CommandStatus = c.deliver(context.Background(), p)
			if sess := b.sess.Load(); sess != nil {
				_ = sess.Transceiver().Submit(resp)
			}
		}()
		return nil, false
	case *pdu.EnquireLink:
		return p.GetResponse(), false
	case *pdu.Unbind:
		c.cfg.Logger.Info("smpp: the SMSC unbinds")
		return p.GetResponse(), true
	case *pdu.EnquireLinkResp, *pdu.UnbindResp:
		return nil, false
	}
	if p.CanResponse() {
		nack := pdu.NewGenericNack()
		nack.SetSequenceNumber(p.GetSequenceNumber())
		nack.(*pdu.GenericNack).CommandStatus = data.ESME_RINVCMDID
		return nack, false
	}
	return nil, false
}

// keyedMutex serialises work on one key (a reference) within this process.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	sync.Mutex
	users int
}

func (k *keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyedLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyedLock{}
		k.locks[key] = l
	}
	l.users++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}

var _ carriers.Messenger = (*Carrier)(nil)
