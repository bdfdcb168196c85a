package webhooks

import (
	"strconv"
	"time"

	"github.com/switchboard/switchboard/kit"
)

// The data of message.* and conversation.created events is written by hand rather than by json.Marshal, whose reflection
// over a message, its conversation, contact and number was about 1.1 µs an event, three events a
// message (json.Marshal was 3.2% of the server's CPU in an e2e run). The bytes are json.Marshal's,
// byte for byte (a spec compares them, HTML escapes and invalid UTF-8 included); a time that
// json.Marshal refuses makes AppendJSON give up, and store.NewEvent then marshals the data.

// AppendJSON appends d as json.Marshal writes it; ok is false when json.Marshal would fail (a time
// outside RFC 3339's years).
func (d MessageData) AppendJSON(b []byte) (_ []byte, ok bool) {
	ok = true
	b = append(b, `{"id":`...)
	b = kit.AppendJSONString(b, d.ID)
	b = append(b, `,"status":`...)
	b = kit.AppendJSONString(b, d.Status)
	b = append(b, `,"direction":`...)
	b = kit.AppendJSONString(b, d.Direction)
	b = append(b, `,"body":`...)
	b = kit.AppendJSONOptString(b, d.Body)
	b = append(b, `,"attachments":`...)
	if d.Attachments == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, a := range d.Attachments {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = kit.AppendJSONString(b, a.ID)
			b = append(b, `,"type":`...)
			b = kit.AppendJSONString(b, a.Type)
			b = append(b, `,"url":`...)
			b = kit.AppendJSONString(b, a.URL)
			b = append(b, `,"status":`...)
			b = kit.AppendJSONString(b, a.Status)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if d.BlastID != nil {
		b = append(b, `,"blast_id":`...)
		b = kit.AppendJSONString(b, *d.BlastID)
	}
	b = append(b, `,"conversation":{"id":`...)
	b = kit.AppendJSONString(b, d.Conversation.ID)
	b = append(b, `,"contact":`...)
	b, ok = d.Conversation.Contact.appendJSON(b, ok)
	b = append(b, `,"phone_number":`...)
	b = d.Conversation.PhoneNumber.appendJSON(b)
	b = append(b, `},"metadata":`...)
	b = kit.AppendJSONStringMap(b, d.Metadata)
	b = append(b, `,"encoding":`...)
	b = kit.AppendJSONString(b, d.Encoding)
	b = append(b, `,"segments":`...)
	b = strconv.AppendInt(b, int64(d.Segments), 10)
	b = append(b, `,"type":`...)
	b = kit.AppendJSONString(b, d.Type)
	b = append(b, `,"created_at":`...)
	b, ok = kit.AppendJSONTime(b, d.CreatedAt, ok)
	for _, f := range [...]struct {
		name string
		v    *time.Time
	}{{`,"send_at":`, d.SendAt}, {`,"sent_at":`, d.SentAt}, {`,"delivered_at":`, d.DeliveredAt},
		{`,"failed_at":`, d.FailedAt}, {`,"received_at":`, d.ReceivedAt}} {
		if f.v != nil {
			b = append(b, f.name...)
			b, ok = kit.AppendJSONTime(b, *f.v, ok)
		}
	}
	if d.FailureReason != nil {
		b = append(b, `,"failure_reason":`...)
		b = kit.AppendJSONString(b, *d.FailureReason)
	}
	return append(b, '}'), ok
}

// AppendJSON appends d as json.Marshal writes it; ok is false when json.Marshal would fail (a time
// outside RFC 3339's years).
func (d ConversationCreatedData) AppendJSON(b []byte) (_ []byte, ok bool) {
	b = append(b, `{"id":`...)
	b = kit.AppendJSONString(b, d.ID)
	b = append(b, `,"phone_number":`...)
	b = d.PhoneNumber.appendJSON(b)
	b = append(b, `,"contact":`...)
	b, ok = d.Contact.appendJSON(b, true)
	return append(b, '}'), ok
}

// appendJSON appends c as json.Marshal writes it; ok turns false when it would fail.
func (c *Contact) appendJSON(b []byte, ok bool) ([]byte, bool) {
	b = append(b, `{"id":`...)
	b = kit.AppendJSONString(b, c.ID)
	b = append(b, `,"phone_number":`...)
	b = kit.AppendJSONString(b, c.PhoneNumber)
	for _, f := range [...]struct {
		name string
		v    *string
	}{{`,"email":`, c.Email}, {`,"first_name":`, c.FirstName}, {`,"last_name":`, c.LastName}} {
		if f.v != nil {
			b = append(b, f.name...)
			b = kit.AppendJSONString(b, *f.v)
		}
	}
	b = append(b, `,"metadata":`...)
	b = kit.AppendJSONStringMap(b, c.Metadata)
	b = append(b, `,"outbound_disabled":`...)
	b = strconv.AppendBool(b, c.OutboundDisabled)
	b = append(b, `,"opted_out":`...)
	b = strconv.AppendBool(b, c.OptedOut)
	b = append(b, `,"created_at":`...)
	b, ok = kit.AppendJSONTime(b, c.CreatedAt, ok)
	return append(b, '}'), ok
}

// appendJSON appends n as json.Marshal writes it.
func (n *PhoneNumber) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = kit.AppendJSONString(b, n.ID)
	b = append(b, `,"metadata":`...)
	b = kit.AppendJSONStringMap(b, n.Metadata)
	b = append(b, `,"name":`...)
	b = kit.AppendJSONOptString(b, n.Name)
	b = append(b, `,"number":`...)
	b = kit.AppendJSONString(b, n.Number)
	b = append(b, `,"type":`...)
	b = kit.AppendJSONString(b, n.Type)
	return append(b, '}')
}
