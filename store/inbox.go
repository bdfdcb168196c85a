package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.jetify.com/typeid"
)

// InboxConversation is a conversation as a user's inbox shows it: with its contact and number,
// its newest message and call, and how many inbound messages the user has not read.
type InboxConversation struct {
	ConversationView
	// LastMessage is the newest message of the thread (blast messages are not threaded); nil when
	// the thread has none.
	LastMessage *Message
	// LastCall is the newest call between the conversation's number and contact, if any.
	LastCall *Call
	// Activity orders the inbox: the time-ordered part of the newest message's or call's id.
	Activity string
	// Unread counts the inbound messages after the user's read mark.
	Unread int
}

// ConversationRead is a user's read mark in a conversation.
type ConversationRead struct {
	UserID         string
	ConversationID string
	AccountID      string
	// LastReadMessageID is the newest message the user has seen; inbound messages after it are unread.
	LastReadMessageID string
	ReadAt            time.Time
}

// ThreadCall is a call in a conversation's thread, with its voicemail if the caller left one.
type ThreadCall struct {
	Call
	Voicemail *Voicemail
}

// inboxRows selects an account's conversations with their newest threaded message and call, and
// the activity key that orders them: the larger of the two ids' time-ordered suffixes (TypeIDs
// of different prefixes compare by their suffix). A conversation without either is left out.
func (s *Store) inboxRows(where string) string {
	greatest := "GREATEST"
	if s.dialect == SQLite {
		greatest = "MAX" // SQLite's scalar max of several arguments
	}
	return `SELECT * FROM (SELECT t.*, ` + greatest + `(COALESCE(SUBSTR(t.last_message_id, ` + suffixFrom(PrefixMessage) + `), ''),
			COALESCE(SUBSTR(t.last_call_id, ` + suffixFrom(PrefixCall) + `), '')) AS activity
		FROM (SELECT cv.id, cv.project_id, cv.account_id, cv.phone_number_id, cv.contact_id, cv.created_at,
			(SELECT m.id FROM messages m WHERE m.conversation_id = cv.id AND m.blast_id IS NULL ORDER BY m.id DESC LIMIT 1) AS last_message_id,
			(SELECT c.id FROM calls c WHERE c.phone_number_id = cv.phone_number_id AND c.contact_id = cv.contact_id
				ORDER BY c.id DESC LIMIT 1) AS last_call_id
			FROM conversations cv WHERE ` + where + `) t) u WHERE u.activity <> ''`
}

// suffixFrom is the SQL SUBSTR position where a TypeID of the prefix has its suffix.
func suffixFrom(prefix string) string { return fmt.Sprint(len(prefix) + 2) }

type inboxRow struct {
	Conversation  `gorm:"embedded"`
	LastMessageID *string
	LastCallID    *string
	Activity      string
}

// InboxConversations returns one page of an account's conversations for a user, the most recent
// activity first. search, when not empty, keeps the conversations whose contact's number, first
// or last name contains it (case-insensitive). Only Page.After continues a list; Before is refused.
func (s *Store) InboxConversations(ctx context.Context, accountID, userID, search string, p Page) ([]InboxConversation, Cursors, error) {
	var cur Cursors
	if p.Before != "" {
		return nil, cur, &CursorError{Param: "before", Reason: "is not supported by this list; continue with after"}
	}
	limit := p.Limit
	if limit <= 0 {
		limit = defaultPageSize
	}
	limit = min(limit, maxPageSize)
	where, args := "cv.account_id = ?", []any{accountID}
	if search = strings.TrimSpace(search); search != "" {
		like := "%" + escapeLike(strings.ToLower(search)) + "%"
		where += ` AND cv.contact_id IN (SELECT k.id FROM contacts k WHERE k.account_id = ? AND (k.phone_number LIKE ? ESCAPE '\'
			OR LOWER(COALESCE(k.first_name, '')) LIKE ? ESCAPE '\' OR LOWER(COALESCE(k.last_name, '')) LIKE ? ESCAPE '\'
			OR LOWER(COALESCE(k.first_name, '') || ' ' || COALESCE(k.last_name, '')) LIKE ? ESCAPE '\'))`
		args = append(args, accountID, like, like, like, like)
	}
	q := s.inboxRows(where)
	if p.After != "" {
		key, err := decodeCursor(p.After, "after")
		if err != nil {
			return nil, cur, err
		}
		q += " AND u.activity < ?"
		args = append(args, key)
	}
	q += " ORDER BY u.activity DESC LIMIT ?"
	args = append(args, limit+1)
	var rows []inboxRow
	if err := s.q(ctx).Raw(q, args...).Scan(&rows).Error; err != nil {
		return nil, cur, translate(err, "list inbox")
	}
	if len(rows) > limit {
		rows = rows[:limit]
		cur.Next = encodeCursor(rows[len(rows)-1].Activity)
	}
	if p.After != "" && len(rows) > 0 {
		cur.Previous = encodeCursor(rows[0].Activity)
	}
	out, err := s.inboxViews(ctx, userID, rows)
	return out, cur, err
}

// InboxConversationsByID returns the account's conversations among ids, for a user, in no order;
// ids of other accounts are left out.
func (s *Store) InboxConversationsByID(ctx context.Context, accountID, userID string, ids []string) ([]InboxConversation, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []inboxRow
	if err := s.q(ctx).Raw(s.inboxRows("cv.account_id = ? AND cv.id IN ?"), accountID, uniq(ids)).Scan(&rows).Error; err != nil {
		return nil, translate(err, "inbox conversations")
	}
	return s.inboxViews(ctx, userID, rows)
}

// InboxConversation returns one of the account's conversations for a user; another account's
// is ErrNotFound, like a missing one. A conversation with neither message nor call is found too.
func (s *Store) InboxConversation(ctx context.Context, accountID, userID, id string) (*InboxConversation, error) {
	var c Conversation
	if err := s.q(ctx).Where("id = ? AND account_id = ?", id, accountID).Take(&c).Error; err != nil {
		return nil, translate(err, "get conversation "+id)
	}
	out, err := s.InboxConversationsByID(ctx, accountID, userID, []string{id})
	if err != nil {
		return nil, err
	}
	if len(out) == 1 {
		return &out[0], nil
	}
	views, err := s.conversationViews(ctx, []Conversation{c})
	if err != nil {
		return nil, err
	}
	return &InboxConversation{ConversationView: views[0]}, nil
}

// inboxViews completes inbox rows with their contacts, numbers, newest message and call, and
// the user's unread counts.
func (s *Store) inboxViews(ctx context.Context, userID string, rows []inboxRow) ([]InboxConversation, error) {
	out := make([]InboxConversation, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	convs := make([]Conversation, len(rows))
	var convIDs, msgIDs, callIDs []string
	for i, r := range rows {
		convs[i] = r.Conversation
		convIDs = append(convIDs, r.ID)
		if r.LastMessageID != nil {
			msgIDs = append(msgIDs, *r.LastMessageID)
		}
		if r.LastCallID != nil {
			callIDs = append(callIDs, *r.LastCallID)
		}
	}
	views, err := s.conversationViews(ctx, convs)
	if err != nil {
		return nil, err
	}
	msgs := map[string]*Message{}
	if len(msgIDs) > 0 {
		var ms []Message
		if err := s.q(ctx).Where("id IN ?", msgIDs).Find(&ms).Error; err != nil {
			return nil, translate(err, "inbox messages")
		}
		for i := range ms {
			msgs[ms[i].ID] = &ms[i]
		}
	}
	calls := map[string]*Call{}
	if len(callIDs) > 0 {
		var cs []Call
		if err := s.q(ctx).Where("id IN ?", callIDs).Find(&cs).Error; err != nil {
			return nil, translate(err, "inbox calls")
		}
		for i := range cs {
			calls[cs[i].ID] = &cs[i]
		}
	}
	unread, err := s.unreadCounts(ctx, userID, convIDs)
	if err != nil {
		return nil, err
	}
	for i, r := range rows {
		out[i] = InboxConversation{ConversationView: views[i], Activity: r.Activity, Unread: unread[r.ID]}
		if r.LastMessageID != nil {
			out[i].LastMessage = msgs[*r.LastMessageID]
		}
		if r.LastCallID != nil {
			out[i].LastCall = calls[*r.LastCallID]
		}
	}
	return out, nil
}

// unreadCounts counts, per conversation, the inbound messages after the user's read mark.
func (s *Store) unreadCounts(ctx context.Context, userID string, convIDs []string) (map[string]int, error) {
	var rows []struct {
		ConversationID string
		N              int
	}
	err := s.q(ctx).Raw(`SELECT m.conversation_id, COUNT(*) AS n FROM messages m
		LEFT JOIN conversation_reads r ON r.conversation_id = m.conversation_id AND r.user_id = ?
		WHERE m.conversation_id IN ? AND m.direction = ? AND m.id > COALESCE(r.last_read_message_id, '')
		GROUP BY m.conversation_id`, userID, convIDs, DirectionInbound).Scan(&rows).Error
	if err != nil {
		return nil, translate(err, "unread counts")
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.ConversationID] = r.N
	}
	return out, nil
}

// UnreadConversations counts the account's conversations with inbound messages the user has not
// read, and those messages.
func (s *Store) UnreadConversations(ctx context.Context, accountID, userID string) (conversations, messages int, err error) {
	var row struct{ Conversations, Messages int }
	err = scan(s.q(ctx).Raw(`SELECT COUNT(DISTINCT m.conversation_id) AS conversations, COUNT(*) AS messages
		FROM conversations cv
		LEFT JOIN conversation_reads r ON r.conversation_id = cv.id AND r.user_id = ?
		JOIN messages m ON m.conversation_id = cv.id AND m.direction = ? AND m.id > COALESCE(r.last_read_message_id, '')
		WHERE cv.account_id = ?`, userID, DirectionInbound, accountID), &row).Error
	if err != nil {
		return 0, 0, translate(err, "count unread")
	}
	return row.Conversations, row.Messages, nil
}

// MarkConversationRead moves the user's read mark in a conversation of its account forward to
// upTo, a message of the conversation, or, when upTo is empty, to the conversation's newest
// message. It reports whether the mark moved (it never moves back). A conversation of another
// account is ErrNotFound; upTo not of the conversation is ErrNotFound too.
func (s *Store) MarkConversationRead(ctx context.Context, accountID, userID, conversationID, upTo string, at time.Time) (bool, error) {
	var c Conversation
	if err := s.q(ctx).Where("id = ? AND account_id = ?", conversationID, accountID).Take(&c).Error; err != nil {
		return false, translate(err, "get conversation "+conversationID)
	}
	q := s.q(ctx).Model(&Message{}).Select("id").Where("conversation_id = ? AND blast_id IS NULL", conversationID)
	if upTo != "" {
		q = q.Where("id = ?", upTo)
	}
	var ids []string
	if err := q.Order("id DESC").Limit(1).Pluck("id", &ids).Error; err != nil {
		return false, translate(err, "read mark")
	}
	if len(ids) == 0 {
		if upTo != "" {
			return false, fmt.Errorf("message %s of conversation %s: %w", upTo, conversationID, ErrNotFound)
		}
		return false, nil // nothing to read
	}
	res := s.q(ctx).Exec(`INSERT INTO conversation_reads (user_id, conversation_id, account_id, last_read_message_id, read_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (user_id, conversation_id) DO UPDATE
		SET last_read_message_id = excluded.last_read_message_id, read_at = excluded.read_at
		WHERE conversation_reads.last_read_message_id < excluded.last_read_message_id`,
		userID, conversationID, accountID, ids[0], at.UTC())
	if res.Error != nil {
		return false, translate(res.Error, "mark read")
	}
	return res.RowsAffected == 1, nil
}

// ReadsSince returns the user's read marks that moved at or after since.
func (s *Store) ReadsSince(ctx context.Context, userID string, since time.Time) ([]ConversationRead, error) {
	var out []ConversationRead
	err := s.q(ctx).Where("user_id = ? AND read_at >= ?", userID, since.UTC()).Order("read_at").Find(&out).Error
	return out, translate(err, "reads since")
}

// Thread returns one page of a conversation's thread, newest first: its messages (blast messages
// are not threaded) and the calls between its number and contact made from the page's oldest
// message up to the page before it (every older call on the last page), so that paging through
// the messages meets every call once. The conversation must be the account's. Only Page.After
// continues a thread.
func (s *Store) Thread(ctx context.Context, accountID, conversationID string, p Page) ([]MessageView, []ThreadCall, Cursors, error) {
	var cur Cursors
	if p.Before != "" {
		return nil, nil, cur, &CursorError{Param: "before", Reason: "is not supported by this list; continue with after"}
	}
	var c Conversation
	if err := s.q(ctx).Where("id = ? AND account_id = ?", conversationID, accountID).Take(&c).Error; err != nil {
		return nil, nil, cur, translate(err, "get conversation "+conversationID)
	}
	rows, cur, err := paginate(s.q(ctx).Model(&Message{}).Where("conversation_id = ? AND blast_id IS NULL", conversationID), p,
		func(m *Message) string { return m.ID })
	if err != nil {
		return nil, nil, cur, err
	}
	msgs, err := s.MessageViews(ctx, rows)
	if err != nil {
		return nil, nil, cur, err
	}
	q := s.q(ctx).Where("phone_number_id = ? AND contact_id = ?", c.PhoneNumberID, c.ContactID)
	if p.After != "" {
		after, _ := decodeCursor(p.After, "after") // paginate has checked it
		q = q.Where("id < ?", IDAt(PrefixCall, TimeOfID(after)))
	}
	if cur.Next != nil {
		q = q.Where("id >= ?", IDAt(PrefixCall, TimeOfID(rows[len(rows)-1].ID)))
	}
	var calls []Call
	if err := q.Order("id DESC").Limit(maxPageSize).Find(&calls).Error; err != nil {
		return nil, nil, cur, translate(err, "thread calls")
	}
	tc, err := s.withVoicemails(ctx, calls)
	return msgs, tc, cur, err
}

// ThreadMessagesByID returns the account's threaded messages (not of a blast) among ids.
func (s *Store) ThreadMessagesByID(ctx context.Context, accountID string, ids []string) ([]MessageView, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []Message
	if err := s.q(ctx).Where("account_id = ? AND id IN ? AND blast_id IS NULL", accountID, uniq(ids)).Order("id").Find(&rows).Error; err != nil {
		return nil, translate(err, "messages")
	}
	return s.MessageViews(ctx, rows)
}

// ConversationIDsOfContacts returns the ids of the account's conversations with these contacts.
func (s *Store) ConversationIDsOfContacts(ctx context.Context, accountID string, contactIDs []string) ([]string, error) {
	if len(contactIDs) == 0 {
		return nil, nil
	}
	var ids []string
	err := s.q(ctx).Model(&Conversation{}).Where("account_id = ? AND contact_id IN ?", accountID, uniq(contactIDs)).Pluck("id", &ids).Error
	return ids, translate(err, "conversations of contacts")
}

// CallsByID returns the account's calls among ids with their voicemails.
func (s *Store) CallsByID(ctx context.Context, accountID string, ids []string) ([]ThreadCall, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var calls []Call
	if err := s.q(ctx).Where("account_id = ? AND id IN ?", accountID, uniq(ids)).Find(&calls).Error; err != nil {
		return nil, translate(err, "calls")
	}
	return s.withVoicemails(ctx, calls)
}

func (s *Store) withVoicemails(ctx context.Context, calls []Call) ([]ThreadCall, error) {
	out := make([]ThreadCall, len(calls))
	if len(calls) == 0 {
		return out, nil
	}
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = c.ID
	}
	var vms []Voicemail
	if err := s.q(ctx).Where("call_id IN ?", ids).Find(&vms).Error; err != nil {
		return nil, translate(err, "thread voicemails")
	}
	byCall := map[string]*Voicemail{}
	for i := range vms {
		byCall[vms[i].CallID] = &vms[i]
	}
	for i, c := range calls {
		out[i] = ThreadCall{Call: c, Voicemail: byCall[c.ID]}
	}
	return out, nil
}

// ConversationOfCall returns the account's conversation between a call's number and contact.
func (s *Store) ConversationOfCall(ctx context.Context, c *Call) (*Conversation, error) {
	var cv Conversation
	err := s.q(ctx).Where("phone_number_id = ? AND contact_id = ?", c.PhoneNumberID, c.ContactID).Take(&cv).Error
	return &cv, translate(err, "conversation of call "+c.ID)
}

// TimeOfID returns the millisecond at which a TypeID of this store was minted (zero for an id
// that is not a TypeID).
func TimeOfID(id string) time.Time {
	tid, err := typeid.FromString(id)
	if err != nil {
		return time.Time{}
	}
	u := tid.UUIDBytes()
	var ms int64
	for i := range 6 {
		ms = ms<<8 | int64(u[i])
	}
	return time.UnixMilli(ms).UTC()
}

// escapeLike escapes LIKE's wildcards (and its escape character, a backslash) in s.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
