package service

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// linkCodeBytes is the entropy of a link code: 9 random bytes are 12 base64url characters
// (72 bits), so codes neither collide in practice nor can be enumerated.
const linkCodeBytes = 9

// urlPattern finds http(s) URLs in a message body: a scheme, then everything up to white space
// or a character that cannot appear unescaped in a URL.
var urlPattern = regexp.MustCompile(`(?i)\bhttps?://[^\s<>"'{}|\\^` + "`" + `]+`)

// LinkOwner names the message a body's links belong to.
type LinkOwner struct {
	ProjectID string
	AccountID string
	// MessageID is the id the message will be stored with (mint it first with
	// store.NewID(store.PrefixMessage)).
	MessageID string
}

// ShortenLinks replaces every http(s) URL in body by {publicURL}/l/{code} and records each link
// (lnk_ id, code, original URL, the owner's message) in tx. Call it inside the transaction that
// stores the message, before segments are counted, so they count the shortened body; when that
// transaction rolls back, the links go with it. A body without URLs comes back unchanged and
// records nothing. Trailing sentence punctuation (".", ",", "!", an unbalanced ")") stays outside
// the link, and URLs already under {publicURL}/l/ are left alone, so shortening twice is harmless.
func ShortenLinks(ctx context.Context, tx *store.Store, publicURL string, owner LinkOwner, body string) (string, error) {
	publicURL = strings.TrimSuffix(publicURL, "/")
	locs := urlPattern.FindAllStringIndex(body, -1)
	if len(locs) == 0 {
		return body, nil
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	var (
		out   strings.Builder
		links []store.Link
		last  int
	)
	for _, loc := range locs {
		start, end := loc[0], trimURLEnd(body[loc[0]:loc[1]])+loc[0]
		raw := body[start:end]
		if strings.HasPrefix(raw, publicURL+"/l/") || len(raw) <= len("https://") {
			continue
		}
		code, err := newLinkCode()
		if err != nil {
			return "", err
		}
		links = append(links, store.Link{ID: store.NewID(store.PrefixLink), Code: code, ProjectID: owner.ProjectID,
			AccountID: owner.AccountID, MessageID: owner.MessageID, URL: raw, CreatedAt: now})
		out.WriteString(body[last:start])
		out.WriteString(publicURL + "/l/" + code)
		last = end
	}
	out.WriteString(body[last:])
	if err := tx.InsertLinks(ctx, links); err != nil {
		return "", err
	}
	return out.String(), nil
}

// trimURLEnd returns the length of u without trailing punctuation that belongs to the sentence.
func trimURLEnd(u string) int {
	for len(u) > 0 {
		c := u[len(u)-1]
		switch {
		case strings.IndexByte(".,;:!?*", c) >= 0:
		case c == ')' && strings.Count(u, "(") < strings.Count(u, ")"):
		case c == ']' && strings.Count(u, "[") < strings.Count(u, "]"):
		default:
			return len(u)
		}
		u = u[:len(u)-1]
	}
	return 0
}

func newLinkCode() (string, error) {
	b := make([]byte, linkCodeBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("service: link code: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// LinkTarget is where a short link leads, without recording a visit (for HEAD, which must not
// change anything). An unknown code, or one of a message never stored, is not found.
func LinkTarget(ctx context.Context, st *store.Store, code string) (string, error) {
	l, err := st.GetLink(ctx, code)
	if err != nil {
		return "", err
	}
	if _, err := st.GetLinkMessage(ctx, l.MessageID); err != nil {
		return "", err
	}
	return l.URL, nil
}

// FollowLink records a visit of the short link with this code and, in the same transaction,
// emits link.followed; it returns the original URL to redirect to. An unknown code is
// store.ErrNotFound.
func FollowLink(ctx context.Context, st *store.Store, code string, at time.Time) (string, error) {
	var url string
	err := st.Tx(ctx, func(tx *store.Store) error {
		l, err := tx.ClickLink(ctx, code, at.UTC().Truncate(time.Microsecond))
		if err != nil {
			return err
		}
		m, err := tx.GetLinkMessage(ctx, l.MessageID)
		if err != nil {
			return err
		}
		data := webhooks.LinkFollowedData{ID: l.ID, URL: l.URL, MessageID: m.ID, Message: webhooks.LinkFollowedMessage{ID: m.ID,
			BlastID: m.BlastID, ConversationID: m.ConversationID, Metadata: webhooks.OrEmpty(m.Metadata)}}
		if err := publish(ctx, tx, l.ProjectID, l.AccountID, webhooks.EventLinkFollowed, data); err != nil {
			return err
		}
		url = l.URL
		return nil
	})
	return url, err
}
