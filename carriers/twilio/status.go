package twilio

import (
	"strconv"

	"github.com/switchboard/switchboard/carriers"
)

// The mapping of Twilio's message statuses and error codes to ours. README.md's Twilio section
// shows the same table to operators; change both together.

// receiptStatus maps a message status of a status callback to a receipt. Statuses missing here
// (accepted, scheduled, queued, sending, sent, receiving, received, partially_delivered) are
// steps on the way and report nothing: `sent` is what the core already records on submission.
var receiptStatus = map[string]carriers.ReceiptStatus{
	"delivered":   carriers.ReceiptDelivered,
	"read":        carriers.ReceiptDelivered, // only channels with read receipts; read implies delivered
	"undelivered": carriers.ReceiptFailed,
	"failed":      carriers.ReceiptFailed,
	"canceled":    carriers.ReceiptFailed, // a scheduled message canceled at Twilio
}

// failureReasons maps Twilio's error codes, of a failed delivery (30xxx) or a refused request
// (21xxx), to failure reasons; any other code is unknown_error.
var failureReasons = map[int]string{
	21211: carriers.FailureInvalidMobileNumber, // invalid 'To' phone number
	21604: carriers.FailureInvalidMobileNumber, // 'To' phone number is required
	30005: carriers.FailureInvalidMobileNumber, // unknown destination handset
	30003: carriers.FailureUnreachableCarrier,  // unreachable destination handset
	21612: carriers.FailureUnreachableCarrier,  // 'To' number not reachable via SMS
	30006: carriers.FailureLandline,            // landline or unreachable carrier
	21614: carriers.FailureLandline,            // 'To' number is not a valid mobile number
	30007: carriers.FailureCarrierFiltered,     // message filtered by the carrier
	30032: carriers.FailureCarrierFiltered,     // toll-free number not verified
	30034: carriers.FailureCarrierFiltered,     // US A2P 10DLC: number not registered to a campaign
	21408: carriers.FailureCarrierFiltered,     // sending to the region not permitted
	30004: carriers.FailureOptedOutAtCarrier,   // message blocked (the handset blocks or opted out)
	21610: carriers.FailureOptedOutAtCarrier,   // attempt to send to an unsubscribed recipient
	11200: carriers.FailureAttachmentUnreachable,
	21620: carriers.FailureAttachmentUnreachable, // invalid media URL
	30008: carriers.FailureUnknown,               // unknown error
}

// failureReason maps an ErrorCode parameter or an error answer's code to a failure reason.
func failureReason(code string) string {
	n, err := strconv.Atoi(code)
	if err != nil {
		return carriers.FailureUnknown
	}
	if r, ok := failureReasons[n]; ok {
		return r
	}
	return carriers.FailureUnknown
}

// callStatuses maps Twilio's call statuses to ours. Every call the adapter answers goes to the
// voicemail recorder: nobody picked up, so a call Twilio calls completed is missed for us (with
// the voicemail, when the caller left one, reported by the recording callback).
var callStatuses = map[string]string{
	"queued":      carriers.CallQueued,
	"initiated":   carriers.CallQueued,
	"ringing":     carriers.CallRinging,
	"in-progress": carriers.CallInProgress,
	"completed":   carriers.CallMissed,
	"busy":        carriers.CallBusy,
	"no-answer":   carriers.CallNoAnswer,
	"canceled":    carriers.CallCanceled,
	"failed":      carriers.CallFailed,
}
