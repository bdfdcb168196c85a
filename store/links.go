package store

import (
	"context"
	"fmt"
	"time"
)

// PrefixLink is the TypeID prefix of shortened links.
const PrefixLink = "lnk"

// Link is a URL of a message's body replaced by {public URL}/l/{Code}.
type Link struct {
	ID        string
	Code      string
	ProjectID string
	AccountID string
	MessageID string
	URL       string
	// Clicks counts the visits; LastClickedAt is the latest.
	Clicks        int
	LastClickedAt *time.Time
	CreatedAt     time.Time
}

// LinkMessage is what link.followed tells about the message that carried a link.
type LinkMessage struct {
	ID             string
	BlastID        *string
	ConversationID string
	Metadata       Metadata
}

// InsertLinks records shortened links.
func (s *Store) InsertLinks(ctx context.Context, links []Link) error {
	if len(links) == 0 {
		return nil
	}
	return translate(s.q(ctx).Create(&links).Error, "insert links")
}

// ClickLink counts a visit of the link with this code, locking its row until the transaction
// ends, and returns the link.
func (s *Store) ClickLink(ctx context.Context, code string, at time.Time) (*Link, error) {
	res := s.q(ctx).Exec("UPDATE links SET clicks = clicks + 1, last_clicked_at = ? WHERE code = ?", at, code)
	if res.Error != nil {
		return nil, translate(res.Error, "click link")
	}
	if res.RowsAffected == 0 {
		return nil, fmt.Errorf("click link: %w", ErrNotFound)
	}
	return s.GetLink(ctx, code)
}

// GetLink returns the link of a code without recording a visit.
func (s *Store) GetLink(ctx context.Context, code string) (*Link, error) {
	var l Link
	if err := s.q(ctx).Where("code = ?", code).Take(&l).Error; err != nil {
		return nil, translate(err, "get link")
	}
	return &l, nil
}

// LinksOfMessage returns a message's links in the order of the body.
func (s *Store) LinksOfMessage(ctx context.Context, messageID string) ([]Link, error) {
	var out []Link
	err := s.q(ctx).Where("message_id = ?", messageID).Order("id").Find(&out).Error
	return out, translate(err, "list links of message")
}

// GetLinkMessage returns the message fields link.followed reports. A link recorded for a message
// that was never stored (its send was rolled back) is not found.
func (s *Store) GetLinkMessage(ctx context.Context, messageID string) (*LinkMessage, error) {
	var m LinkMessage
	res := scan(s.q(ctx).Table("messages").Select("id, blast_id, conversation_id, metadata").Where("id = ?", messageID), &m)
	if res.Error != nil {
		return nil, translate(res.Error, "get link message")
	}
	if res.RowsAffected == 0 {
		return nil, fmt.Errorf("get link message %s: %w", messageID, ErrNotFound)
	}
	return &m, nil
}
