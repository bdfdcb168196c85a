package server

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/switchboard/switchboard/gen"
	"github.com/switchboard/switchboard/kit"
)

// sentMessage is SendMessage's 201: the generated gen.SendMessage201JSONResponse's answer, the
// same header, status and bytes, with the message written by appendMessageJSON instead of by
// encoding/json's reflection (the answer to every send).
type sentMessage gen.Message

func (m sentMessage) VisitSendMessageResponse(w http.ResponseWriter) error {
	buf := answerBuffers.Get().(*[]byte)
	b, ok := appendMessageJSON((*buf)[:0], (*gen.Message)(&m))
	if !ok {
		doneAnswer(buf, b)
		return gen.SendMessage201JSONResponse(m).VisitSendMessageResponse(w)
	}
	return writeAnswer(w, http.StatusCreated, buf, b)
}

// answerBuffers are the buffers of the answers written by hand (sentMessage, accountAnswer).
var answerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// writeAnswer writes b, a JSON value appended to buf (from answerBuffers), as the generated
// answers write theirs (the JSON Content-Type, status, the value and the newline json.Encoder
// ends it with), and gives buf back.
func writeAnswer(w http.ResponseWriter, status int, buf *[]byte, b []byte) error {
	b = append(b, '\n')
	defer doneAnswer(buf, b)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, err := w.Write(b)
	return err
}

// doneAnswer gives buf back to answerBuffers with b, what was appended to it, unless b grew
// past 64 kB.
func doneAnswer(buf *[]byte, b []byte) {
	if cap(b) <= 64<<10 {
		*buf = b
		answerBuffers.Put(buf)
	}
}

// appendMessageJSON appends m as json.Marshal writes it (the fields in gen.Message's order, which
// is its JSON's); ok is false when json.Marshal would fail (a time outside RFC 3339's years, an
// email address that does not parse), and b is then to be dropped.
func appendMessageJSON(b []byte, m *gen.Message) (_ []byte, ok bool) {
	ok = true
	b = append(b, `{"attachments":`...)
	if m.Attachments == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, a := range m.Attachments {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = kit.AppendJSONString(b, a.Id)
			if a.Status != nil {
				b = append(b, `,"status":`...)
				b = kit.AppendJSONString(b, string(*a.Status))
			}
			b = append(b, `,"type":`...)
			b = kit.AppendJSONString(b, string(a.Type))
			b = append(b, `,"url":`...)
			b = kit.AppendJSONString(b, a.Url)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"blast_id":`...)
	b = kit.AppendJSONOptString(b, m.BlastId)
	b = append(b, `,"body":`...)
	b = kit.AppendJSONOptString(b, m.Body)
	c := &m.Conversation.Contact
	b = append(b, `,"conversation":{"contact":{"created_at":`...)
	b, ok = kit.AppendJSONTime(b, c.CreatedAt, ok)
	if c.Email != nil {
		// openapi_types.Email writes its parsed address (and refuses one that does not parse).
		email, err := c.Email.MarshalJSON()
		if err != nil {
			return b, false
		}
		b = append(b, `,"email":`...)
		b = append(b, email...)
	}
	if c.FirstName != nil {
		b = append(b, `,"first_name":`...)
		b = kit.AppendJSONString(b, *c.FirstName)
	}
	b = append(b, `,"id":`...)
	b = kit.AppendJSONString(b, c.Id)
	if c.LastName != nil {
		b = append(b, `,"last_name":`...)
		b = kit.AppendJSONString(b, *c.LastName)
	}
	b = append(b, `,"metadata":`...)
	b = kit.AppendJSONStringMap(b, c.Metadata)
	b = append(b, `,"opted_out":`...)
	b = strconv.AppendBool(b, c.OptedOut)
	b = append(b, `,"outbound_disabled":`...)
	b = strconv.AppendBool(b, c.OutboundDisabled)
	b = append(b, `,"phone_number":`...)
	b = kit.AppendJSONString(b, c.PhoneNumber)
	n := &m.Conversation.PhoneNumber
	b = append(b, `},"id":`...)
	b = kit.AppendJSONString(b, m.Conversation.Id)
	b = append(b, `,"phone_number":{"id":`...)
	b = kit.AppendJSONString(b, n.Id)
	b = append(b, `,"metadata":`...)
	b = kit.AppendJSONStringMap(b, n.Metadata)
	b = append(b, `,"name":`...)
	b = kit.AppendJSONOptString(b, n.Name)
	b = append(b, `,"number":`...)
	b = kit.AppendJSONString(b, n.Number)
	b = append(b, `,"type":`...)
	b = kit.AppendJSONString(b, string(n.Type))
	b = append(b, `}},"created_at":`...)
	b, ok = kit.AppendJSONTime(b, m.CreatedAt, ok)
	if m.DeliveredAt != nil {
		b = append(b, `,"delivered_at":`...)
		b, ok = kit.AppendJSONTime(b, *m.DeliveredAt, ok)
	}
	b = append(b, `,"direction":`...)
	b = kit.AppendJSONString(b, string(m.Direction))
	b = append(b, `,"encoding":`...)
	b = kit.AppendJSONString(b, string(m.Encoding))
	if m.FailedAt != nil {
		b = append(b, `,"failed_at":`...)
		b, ok = kit.AppendJSONTime(b, *m.FailedAt, ok)
	}
	if m.FailureReason != nil {
		b = append(b, `,"failure_reason":`...)
		b = kit.AppendJSONString(b, string(*m.FailureReason))
	}
	b = append(b, `,"id":`...)
	b = kit.AppendJSONString(b, m.Id)
	b = append(b, `,"metadata":`...)
	b = kit.AppendJSONStringMap(b, m.Metadata)
	if m.ReceivedAt != nil {
		b = append(b, `,"received_at":`...)
		b, ok = kit.AppendJSONTime(b, *m.ReceivedAt, ok)
	}
	b = append(b, `,"segments":`...)
	b = strconv.AppendInt(b, int64(m.Segments), 10)
	if m.SendAt != nil {
		b = append(b, `,"send_at":`...)
		b, ok = kit.AppendJSONTime(b, *m.SendAt, ok)
	}
	if m.SentAt != nil {
		b = append(b, `,"sent_at":`...)
		b, ok = kit.AppendJSONTime(b, *m.SentAt, ok)
	}
	b = append(b, `,"status":`...)
	b = kit.AppendJSONString(b, string(m.Status))
	b = append(b, `,"type":`...)
	b = kit.AppendJSONString(b, string(m.Type))
	return append(b, '}'), ok
}
