package service

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/store"
)

// Verification rules (decisions §7).
const (
	// VerificationTTL is how long a code can be checked.
	VerificationTTL = 10 * time.Minute
	// MaxWrongCodes is how many wrong codes exhaust a verification.
	MaxWrongCodes = 3
)

// Outcomes of a code check.
const (
	CheckOK        = "ok"
	CheckIncorrect = "incorrect"
	CheckExhausted = "exhausted"
	CheckExpired   = "expired"
	// CheckAlreadyVerified answers a check of a verification that is already verified (200, as
	// the Surge SDK's types have it), which changes nothing.
	CheckAlreadyVerified = "already_verified"
)

// verificationSecret names the installation secret that keys the codes' hashes (and seals a code
// in its send job).
const verificationSecret = "verification_codes"

// VerificationsConfig wires the Verifications service.
type VerificationsConfig struct {
	// Store and Carriers are required.
	Store    *store.Store
	Carriers *Carriers
	// Sender is the number codes are sent from (E.164, held by the installation). Defaults to the
	// shared demo number, which needs no campaign of the customer's: codes are the installation's
	// own traffic.
	Sender string
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
}

// Verifications sends 6-digit codes to phone numbers and checks them. A code is drawn with
// crypto/rand, stored only as an HMAC-SHA256 (keyed by an installation secret) and compared in
// constant time; it travels to its send job sealed (AES-GCM under a key derived from the same
// secret), and never appears in logs or API responses.
type Verifications struct {
	cfg VerificationsConfig

	mu  sync.Mutex
	key []byte
}

// NewVerifications returns the Verifications service.
func NewVerifications(cfg VerificationsConfig) (*Verifications, error) {
	if cfg.Store == nil || cfg.Carriers == nil {
		return nil, errors.New("service: NewVerifications needs Store and Carriers")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Verifications{cfg: cfg}, nil
}

// Register adds the worker that sends codes.
func (v *Verifications) Register(w *river.Workers) {
	river.AddWorker(w, &verificationSendWorker{v: v})
}

func (v *Verifications) now() time.Time { return v.cfg.Now().UTC().Truncate(time.Microsecond) }

// secret returns the installation's verification key, read once.
func (v *Verifications) secret(ctx context.Context) ([]byte, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.key == nil {
		k, err := v.cfg.Store.InstallationSecret(ctx, verificationSecret, 32)
		if err != nil {
			return nil, err
		}
		v.key = k
	}
	return v.key, nil
}

func mac(key []byte, parts ...string) []byte {
	h := hmac.New(sha256.New, key)
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum(nil)
}

// sender returns the number codes are sent from.
func (v *Verifications) sender(ctx context.Context) (*store.PhoneNumber, error) {
	var (
		n   *store.PhoneNumber
		err error
	)
	if v.cfg.Sender != "" {
		n, err = v.cfg.Store.HeldNumber(ctx, v.cfg.Sender)
	} else {
		n, err = v.cfg.Store.DemoNumber(ctx)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, Errorf(TypeNoPhoneNumber, "this installation has no number to send verification codes from")
	}
	return n, err
}

// Create sends a new code to a phone number for one of the project's accounts, or for the
// project itself when accountID is empty (Surge's POST /verifications: the code goes out from the
// installation's verification sender either way, so no account is needed to send it).
func (v *Verifications) Create(ctx context.Context, projectID, accountID, phone string) (*store.Verification, error) {
	phone, err := NormalizeE164(phone)
	if err != nil {
		return nil, Invalid("phone_number", ErrNotE164.Error())
	}
	var account *string
	if accountID != "" {
		acct, err := v.cfg.Store.GetAccount(ctx, projectID, accountID)
		if err != nil {
			return nil, err
		}
		if acct.ArchivedAt != nil {
			return nil, Errorf(TypeAccountArchived, "the account is archived and cannot send messages")
		}
		account = &acct.ID
	}
	if _, err := v.sender(ctx); err != nil {
		return nil, err
	}
	key, err := v.secret(ctx)
	if err != nil {
		return nil, err
	}
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return nil, fmt.Errorf("service: draw verification code: %w", err)
	}
	code := fmt.Sprintf("%06d", n.Int64())
	sealed, err := seal(key, code)
	if err != nil {
		return nil, err
	}
	now := v.now()
	ver := &store.Verification{ID: store.NewID(store.PrefixVerification), ProjectID: projectID, AccountID: account,
		PhoneNumber: phone, Status: store.VerificationPending, CreatedAt: now, ExpiresAt: now.Add(VerificationTTL), UpdatedAt: now}
	ver.CodeHash = mac(key, ver.ID, code)
	err = v.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.InsertVerification(ctx, ver); err != nil {
			return err
		}
		return tx.InsertJob(ctx, verificationSendArgs{VerificationID: ver.ID, ProjectID: projectID, Sealed: sealed}, nil)
	})
	if err != nil {
		return nil, err
	}
	return ver, nil
}

// Get returns a project's verification; a pending one past its expiry shows as expired.
func (v *Verifications) Get(ctx context.Context, projectID, id string) (*store.Verification, error) {
	ver, err := v.cfg.Store.GetVerification(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	if ver.Status == store.VerificationPending && !v.now().Before(ver.ExpiresAt) {
		ver.Status = store.VerificationExpired
	}
	return ver, nil
}

// Check checks a code and returns the outcome with the verification as it now is. Every check
// counts in attempt_count; the third wrong code exhausts the verification (and answers
// exhausted, as every later check does); a check after the expiry answers expired; a check of a
// verified verification answers already_verified and counts no attempt.
func (v *Verifications) Check(ctx context.Context, projectID, id, code string) (string, *store.Verification, error) {
	key, err := v.secret(ctx)
	if err != nil {
		return "", nil, err
	}
	var (
		result string
		out    *store.Verification
	)
	err = v.cfg.Store.Tx(ctx, func(tx *store.Store) error {
		ver, err := tx.LockVerification(ctx, projectID, id)
		if err != nil {
			return err
		}
		if ver.Status == store.VerificationVerified {
			result, out = CheckAlreadyVerified, ver
			return nil
		}
		now := v.now()
		ver.AttemptCount++
		ver.UpdatedAt = now
		switch {
		case ver.Status == store.VerificationExhausted:
			result = CheckExhausted
		case ver.Status == store.VerificationExpired || !now.Before(ver.ExpiresAt):
			ver.Status, result = store.VerificationExpired, CheckExpired
		case hmac.Equal(mac(key, ver.ID, code), ver.CodeHash):
			ver.Status, result = store.VerificationVerified, CheckOK
		// While pending, every earlier check was a wrong code: attempt_count is the wrong codes.
		case ver.AttemptCount >= MaxWrongCodes:
			ver.Status, result = store.VerificationExhausted, CheckExhausted
		default:
			result = CheckIncorrect
		}
		out = ver
		return tx.SaveVerificationCheck(ctx, ver)
	})
	if err != nil {
		return "", nil, err
	}
	return result, out, nil
}

// seal encrypts a code for its send job.
func seal(key []byte, code string) ([]byte, error) {
	aead, err := codeCipher(key)
	if err != nil {
		return nil, err
	}
	return sealWith(aead, []byte(code)), nil
}

func unseal(key, sealed []byte) (string, error) {
	aead, err := codeCipher(key)
	if err != nil {
		return "", err
	}
	code, err := openWith(aead, sealed, "verification code")
	return string(code), err
}

func codeCipher(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(mac(key, "seal")[:32])
	if err != nil {
		return nil, fmt.Errorf("service: verification cipher: %w", err)
	}
	return cipher.NewGCM(block)
}

// verificationSendArgs is the job that sends a verification's code; the code is sealed.
type verificationSendArgs struct {
	VerificationID string `json:"verification_id"`
	ProjectID      string `json:"project_id"`
	Sealed         []byte `json:"sealed"`
}

// Kind names the job.
func (verificationSendArgs) Kind() string { return "verification_send" }

type verificationSendWorker struct {
	river.WorkerDefaults[verificationSendArgs]
	v *Verifications
}

// Work submits the code to the sender's carrier with the verification id as the reference, so a
// repeated run does not send it twice. A verification no longer pending or expired gets nothing.
func (w *verificationSendWorker) Work(ctx context.Context, j *river.Job[verificationSendArgs]) error {
	v := w.v
	ver, err := v.cfg.Store.GetVerification(ctx, j.Args.ProjectID, j.Args.VerificationID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if ver.Status != store.VerificationPending || !v.now().Before(ver.ExpiresAt) {
		return nil
	}
	key, err := v.secret(ctx)
	if err != nil {
		return err
	}
	code, err := unseal(key, j.Args.Sealed)
	if err != nil {
		v.cfg.Logger.Error("verification code cannot be opened", "verification_id", ver.ID, "err", err)
		return nil
	}
	sender, err := v.sender(ctx)
	if err != nil {
		return err
	}
	messenger, err := v.cfg.Carriers.Messenger(sender.Carrier)
	if err != nil {
		return err
	}
	body := "Your verification code is " + code + ". It expires in 10 minutes."
	seg := Segment(body)
	_, err = messenger.Submit(ctx, carriers.Outbound{Reference: ver.ID, From: sender.Number, To: ver.PhoneNumber, Body: body,
		Encoding: seg.Encoding, Segments: seg.Segments})
	var refused *carriers.SubmitError
	if errors.As(err, &refused) && refused.Permanent {
		v.cfg.Logger.Warn("verification code refused by the carrier", "verification_id", ver.ID, "reason", refused.Reason)
		return nil
	}
	if err != nil {
		// The error names the carrier's failure, never the message body.
		return fmt.Errorf("send verification %s: %w", ver.ID, err)
	}
	return nil
}
