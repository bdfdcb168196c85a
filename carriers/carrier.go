// Package carriers is the seam between Switchboard and the networks that carry its traffic. A
// carrier adapter (carriers/sim, and later carriers/twilio, carriers/smpp) implements Carrier and
// whichever optional capability interfaces it supports (Messenger, NumberInventory,
// CampaignRegistry, ...); the core finds them by type assertion and answers a clear error where
// a carrier lacks one. What carriers report asynchronously (delivery receipts, inbound messages,
// campaign verdicts, call events) reaches the core through one path: the Reporter the adapter is
// given when it is built.
//
// The package defines only types; it imports nothing of the core, so adapters depend on it and
// never the other way round. carriers/carriertest is the conformance suite every adapter passes.
package carriers

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Carrier is what every adapter is.
type Carrier interface {
	// Name identifies the adapter ("sim", "twilio", "smpp"). Phone numbers record the name of the
	// carrier that provides them, so one installation can run several.
	Name() string
}

// Reporter receives everything a carrier reports asynchronously. The core implements it. Report
// must be safe to call more than once with the same report (carriers retry callbacks), and an
// adapter treats an error as "not accepted, report again later".
type Reporter interface {
	Report(ctx context.Context, r Report) error
}

// Report is one asynchronous report; exactly one of its pointer fields is set.
type Report struct {
	// Carrier is the Name of the reporting adapter.
	Carrier string
	Receipt *Receipt
	Inbound *InboundMessage
	Verdict *Verdict
	Call    *CallEvent
}

// ReceiptStatus is the fate of a submitted message as a delivery receipt tells it.
type ReceiptStatus string

// Receipt statuses.
const (
	ReceiptDelivered ReceiptStatus = "delivered"
	ReceiptFailed    ReceiptStatus = "failed"
)

// Failure reasons, as the API reports them in a message's failure_reason.
const (
	FailureInvalidMobileNumber   = "invalid_mobile_number"
	FailureUnreachableCarrier    = "unreachable_carrier"
	FailureLandline              = "landline"
	FailureCarrierFiltered       = "carrier_filtered"
	FailureOptedOutAtCarrier     = "opted_out_at_carrier"
	FailureExpired               = "expired"
	FailureAttachmentUnreachable = "attachment_unreachable"
	FailureUnknown               = "unknown_error"
)

// Receipt reports the final fate of a submitted message.
type Receipt struct {
	// Reference is the Outbound.Reference the message was submitted with (our message id).
	Reference string
	// CarrierID is the carrier's own id of the message, when it has one.
	CarrierID string
	Status    ReceiptStatus
	// FailureReason is one of the Failure* constants when Status is ReceiptFailed.
	FailureReason string
	At            time.Time
}

// InboundMessage is a message a handset sent to one of our numbers.
type InboundMessage struct {
	// CarrierID is the carrier's id of the message; the core ignores a repeated one.
	CarrierID string
	// From is the sender (E.164); To is our number (E.164 or short code).
	From, To string
	Body     string
	Media    []Media
	At       time.Time
}

// Media is an attachment of a message. In an InboundMessage, URL is the carrier's: the core
// fetches the file from it (through its guarded client, with the carrier's credentials when the
// adapter is a MediaSource) and never shows it to customers.
type Media struct {
	URL         string
	ContentType string
}

// MediaSource is implemented by adapters whose inbound media URLs need the carrier's credentials.
type MediaSource interface {
	Carrier
	// AuthorizeMedia adds the carrier's credentials to a request for a media URL that an
	// InboundMessage of this carrier carried, when the URL is the carrier's own; a URL elsewhere is
	// left as it is, so credentials never go to another host.
	AuthorizeMedia(req *http.Request)
}

// Verdict is a carrier registry's decision on a submitted campaign.
type Verdict struct {
	// Reference is the id the campaign was submitted with (cpn_… or tfc_…).
	Reference string
	Approved  bool
	// Reason explains a rejection.
	Reason string
}

// CallEvent reports a voice call's progress: a carrier reports each call (identified by its
// CarrierID) as it moves through the Call* statuses, at least once per move and possibly out of
// order. A final status (completed, busy, no_answer, missed, canceled, failed) ends the call;
// later reports may still bring its recording.
type CallEvent struct {
	// CarrierID is the carrier's id of the call; all reports about one call carry it.
	CarrierID string
	// From is the caller (E.164); To is our number.
	From, To string
	// Status is one of the Call* constants.
	Status string
	At     time.Time
	// Duration is the call's length in seconds, reported with its final status.
	Duration int
	// RecordingURL locates a recording of the call, for the carrier's own Voice.FetchRecording;
	// RecordingSeconds is its length. Both are empty when there is no recording (yet).
	RecordingURL     string
	RecordingSeconds int
	// Voicemail says that the recording is a message the caller left on a call nobody answered.
	Voicemail bool
}

// Call statuses, as the API reports them.
const (
	CallQueued     = "queued"
	CallRinging    = "ringing"
	CallInProgress = "in_progress"
	CallCompleted  = "completed"
	CallBusy       = "busy"
	CallNoAnswer   = "no_answer"
	CallMissed     = "missed"
	CallCanceled   = "canceled"
	CallFailed     = "failed"
)

// Voice is the capability to take calls on the installation's numbers. The adapter reports each
// call's progress as CallEvents through the Reporter; the core then copies a reported recording
// with FetchRecording, so the adapter may keep its recordings wherever it likes.
type Voice interface {
	Carrier
	// FetchRecording returns the audio of a recording that a CallEvent's RecordingURL located.
	FetchRecording(ctx context.Context, url string) (Audio, error)
}

// Audio is a recording's file.
type Audio struct {
	// ContentType is the file's media type, such as audio/wav.
	ContentType string
	Data        []byte
}

// Messenger is the capability to send SMS and MMS.
type Messenger interface {
	Carrier
	// Submit hands a message to the carrier. A repeated Reference must not send the message
	// again: the adapter (or the carrier, through the reference) makes submission idempotent and
	// answers with the first submission. The fate arrives later as a Receipt.
	Submit(ctx context.Context, m Outbound) (Submission, error)
}

// Outbound is a message to submit.
type Outbound struct {
	// Reference is our message id, sent as the carrier's client reference.
	Reference string
	// From is our number (E.164 or short code); To is the handset (E.164).
	From, To string
	Body     string
	Media    []Media
	// Encoding ("gsm7" or "ucs2") and Segments are as the core counted them.
	Encoding string
	Segments int
}

// Submission is the carrier's acceptance of a message.
type Submission struct {
	CarrierID string
	// Duplicate is true when the Reference had been submitted before and nothing was sent again.
	Duplicate bool
}

// SubmitError is a refusal to accept a message. Permanent refusals fail the message with
// Reason; others are retried.
type SubmitError struct {
	Permanent bool
	// Reason is one of the Failure* constants.
	Reason string
	Err    error
}

func (e *SubmitError) Error() string {
	if e.Err != nil {
		return "carrier refused the message (" + e.Reason + "): " + e.Err.Error()
	}
	return "carrier refused the message (" + e.Reason + ")"
}

func (e *SubmitError) Unwrap() error { return e.Err }

// NumberInventory is the capability to search, provision and release phone numbers.
type NumberInventory interface {
	Carrier
	SearchNumbers(ctx context.Context, q NumberQuery) ([]AvailableNumber, error)
	// ProvisionNumber takes a number for this installation; ErrNumberUnavailable if it cannot.
	ProvisionNumber(ctx context.Context, number string) error
	// ReleaseNumber gives a number back; releasing a number not held is not an error.
	ReleaseNumber(ctx context.Context, number string) error
}

// NumberQuery selects available numbers.
type NumberQuery struct {
	// Country is "US" or "CA".
	Country string
	// Type is "local" or "toll_free".
	Type string
	// AreaCode is a 3-digit area code (for toll-free, the prefix such as 833); optional.
	AreaCode string
	// Near, for local numbers, asks for numbers near a place, nearest first; optional. With an
	// empty Country, numbers of either country may be offered. An adapter that cannot place its
	// numbers answers ErrNearUnsupported.
	Near *Location
	// Limit caps the answer; 0 means the adapter's default.
	Limit int
}

// Location is a point on the Earth, in decimal degrees (WGS 84).
type Location struct {
	Latitude, Longitude float64
}

// AvailableNumber is a number that can be provisioned.
type AvailableNumber struct {
	Number  string
	Country string
	Type    string
}

// Errors of the number inventory.
var (
	// ErrNumberUnavailable means the number is taken or does not exist in the inventory.
	ErrNumberUnavailable = errors.New("carriers: number not available")
	// ErrPortInOnly means the number can only be ported in (toll-free 800 numbers).
	ErrPortInOnly = errors.New("carriers: number available only by port-in")
	// ErrNearUnsupported means the inventory cannot search numbers near a place (NumberQuery.Near).
	ErrNearUnsupported = errors.New("carriers: the inventory cannot search numbers near a place")
)

// CampaignRegistry is the capability to register messaging campaigns with the carriers. Verdicts
// arrive later through the Reporter. A registry that cannot do one of these (an import by TCR id,
// a toll-free verification, a withdrawal) answers ErrUnsupported.
type CampaignRegistry interface {
	Carrier
	SubmitCampaign(ctx context.Context, c CampaignSubmission) error
	SubmitTollFreeVerification(ctx context.Context, c TollFreeSubmission) error
	// WithdrawCampaign withdraws what was submitted under reference (a campaign, cpn_…, or a
	// toll-free verification, tfc_…), whatever its state: a pending review ends without a verdict
	// and an approved one stops carrying traffic at the carrier. Withdrawing a reference that is
	// unknown or withdrawn already is no error.
	WithdrawCampaign(ctx context.Context, reference string) error
}

// BrandVerifier is the capability to text again the one-time code with which a sole proprietor
// confirms the brand a campaign registers: the registry sends it to the brand's mobile number.
// Several requests may each send a code; a repeated Reference must not send it twice.
type BrandVerifier interface {
	Carrier
	SendBrandVerification(ctx context.Context, b BrandVerification) error
}

// BrandVerification is a request for a brand's verification code.
type BrandVerification struct {
	// Reference identifies this request (bvm_…); a retried request carries the same one.
	Reference string
	// AccountID is the brand's account; CampaignID the campaign under review that registers it.
	AccountID, CampaignID string
	// MobileNumber is the sole proprietor's mobile number (E.164), where the code goes.
	MobileNumber string
}

// CampaignSubmission is a 10DLC campaign to register.
type CampaignSubmission struct {
	// Reference is our campaign id (cpn_…); the verdict carries it back.
	Reference string
	AccountID string
	// Brand is the account's brand, which registries register before (or with) the campaign.
	Brand          Brand
	Description    string
	UseCases       []string
	MessageSamples []string
	// ConsentFlow says how recipients opt in.
	ConsentFlow string
	// Includes lists properties of the content: links, phone_numbers, age_gated, direct_lending.
	Includes []string
	// PrivacyPolicyURL and TermsAndConditionsURL are optional.
	PrivacyPolicyURL, TermsAndConditionsURL string
	// Volume is low or high.
	Volume string
	// OptInMessage, OptOutMessage and HelpMessage are what the core answers START, STOP and HELP.
	OptInMessage, OptOutMessage, HelpMessage string
	// TCRID is set when the campaign was registered elsewhere and is imported.
	TCRID string
}

// TollFreeSubmission is a toll-free verification request.
type TollFreeSubmission struct {
	// Reference is our toll-free campaign id (tfc_…).
	Reference   string
	AccountID   string
	Brand       Brand
	PhoneNumber string
	Description string
	// UseCases are the contract's toll-free use cases (account_notification, …).
	UseCases       []string
	MessageSamples []string
	// Includes lists properties of the content: age_gated.
	Includes                                []string
	PrivacyPolicyURL, TermsAndConditionsURL string
	// OptInMessage and HelpMessage are what the core answers START and HELP.
	OptInMessage, HelpMessage string
}

// Brand is the legal entity an account sends for, as the contract's Organization describes it
// (its enumerations: Type co_op, government, llc, non_profit, partnership, private_corporation,
// public_corporation or sole_proprietor; IdentifierType ein; Industry in lower case). Fields the
// account has not given are empty.
type Brand struct {
	// Name is the name recipients know (the account's brand_name, else its name).
	Name               string
	RegisteredName     string
	Type               string
	Industry           string
	Website            string
	Email              string
	MobileNumber       string
	Identifier         string
	IdentifierType     string
	Country            string
	RegionsOfOperation []string
	StockExchange      string
	StockSymbol        string
	Address            BrandAddress
	Contact            BrandContact
}

// BrandAddress is the address of a brand's headquarters.
type BrandAddress struct {
	Name, Line1, Line2, Locality, Region, PostalCode, Country string
}

// BrandContact is the person who answers for a brand.
type BrandContact struct {
	FirstName, LastName, Email, PhoneNumber, Title, TitleOther string
}

// NumberAssigner is implemented by registries that must be told which numbers send under a
// campaign (Twilio adds them to the account's Messaging Service, Telnyx assigns them to the
// campaign). The core calls it, from a job that retries, when a number is attached to a campaign
// registered with the number's carrier and when it is detached or released.
type NumberAssigner interface {
	Carrier
	// AssignNumber puts number under the campaign submitted as reference; repeating it is no error.
	AssignNumber(ctx context.Context, reference, number string) error
	// UnassignNumber takes number from the campaign; a number not assigned is no error.
	UnassignNumber(ctx context.Context, reference, number string) error
}

// ErrUnsupported is returned by the core when the carrier behind a number lacks a capability.
var ErrUnsupported = errors.New("carriers: capability not supported by this carrier")
