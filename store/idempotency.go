package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"
)

// Idempotency keys (decisions §1) under faults. A request claims its key before it runs: the claim
// has a token and a lease that its owner renews while it works. What the request creates is
// written together with a reference to it in the key's record, in one transaction or one
// statement, and only while the request still holds the claim (ErrIdempotencyClaimLost
// otherwise). Its response is recorded afterwards. So a retry finds one of:
//
//   - the recorded response: replayed;
//   - a committed resource without a response (the owner died, or the database went away, after
//     the commit): the resource, shown again;
//   - neither, with the lease running: the first request is still in flight;
//   - neither, with the lease over (the owner crashed or its transaction rolled back): the retry
//     takes the key over and runs afresh; the old owner, should it still be alive, can no longer
//     write, so no request creates a second resource.

// IdempotencyRecord remembers a POST sent with an Idempotency-Key.
type IdempotencyRecord struct {
	ProjectID   string `gorm:"primaryKey"`
	Key         string `gorm:"primaryKey"`
	RequestHash string
	// Status is 0 until the response is recorded.
	Status      int
	Body        []byte
	ContentType string
	// ResourceID is the resource the request created, recorded in the transaction that created
	// it: while Status is 0, the request committed and its response was not recorded.
	ResourceID *string
	// Token names the claim of the request that serves the key; LeaseUntil is when the claim
	// lapses unless its owner renews it (nil: a claim of an earlier release, lapsed).
	Token      string
	LeaseUntil *time.Time
	CreatedAt  time.Time
}

// TableName names the table behind IdempotencyRecord.
func (IdempotencyRecord) TableName() string { return "idempotency_keys" }

// IdempotencyClaim is a request's hold on its Idempotency-Key.
type IdempotencyClaim struct {
	ProjectID, Key string
	// Token tells this claim from a later one on the same key.
	Token string
}

// ErrIdempotencyClaimLost means the request's claim on its Idempotency-Key lapsed and another
// request with the key took it over: nothing was written.
var ErrIdempotencyClaimLost = errors.New("store: the idempotency key was taken over by another request")

type claimKey struct{}

// WithIdempotencyClaim returns ctx carrying the request's claim. The store operation that
// creates the request's resource records it with the key in its own transaction, and writes
// nothing when the claim has been lost; operations that create nothing ignore it.
func WithIdempotencyClaim(ctx context.Context, c *IdempotencyClaim) context.Context {
	return context.WithValue(ctx, claimKey{}, c)
}

func claimOf(ctx context.Context) *IdempotencyClaim {
	c, _ := ctx.Value(claimKey{}).(*IdempotencyClaim)
	return c
}

// claimTimeout bounds the statement of a claim, which runs on after its request's client went
// away, when the lease is shorter.
const claimTimeout = 10 * time.Second

// ClaimIdempotencyKey claims (project, key) for a request at now, with a lease of lease. It
// returns the claim when the caller now holds the key and must serve the request: a new key, one
// older than ttl (replaced), or an abandoned claim of the same request (lapsed lease, nothing
// committed). Otherwise it returns the record that stands: a response, a committed resource, a
// claim still in flight, or another request's.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, projectID, key, requestHash string, now time.Time, ttl, lease time.Duration) (*IdempotencyClaim, *IdempotencyRecord, error) {
	now = now.UTC()
	c := &IdempotencyClaim{ProjectID: projectID, Key: key, Token: rand.Text()}
	// The claim's statement runs to its end even when ctx is cancelled (the request's client went
	// away): given up while it waits for the key's row, or before its answer is read, it may still
	// commit, and leave a claim that the request never learns of, so never releases, and that
	// refuses the client's retry for the whole lease. Its bound is no shorter than the lease: a
	// claim that commits after it has lapsed by then.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(lease, claimTimeout))
	defer cancel()
	// A claim released between the two statements leaves nothing to read: claim again.
	for range 3 {
		var token string
		res := scan(s.q(wctx).Raw(`INSERT INTO idempotency_keys (project_id, key, request_hash, status, content_type, token, lease_until, created_at)
			VALUES (?, ?, ?, 0, '', ?, ?, ?)
			ON CONFLICT (project_id, key) DO UPDATE SET request_hash = excluded.request_hash, status = 0, body = NULL,
				content_type = '', resource_id = NULL, token = excluded.token, lease_until = excluded.lease_until, created_at = excluded.created_at
			WHERE idempotency_keys.created_at < ? OR (idempotency_keys.status = 0 AND idempotency_keys.resource_id IS NULL
				AND idempotency_keys.request_hash = excluded.request_hash
				AND (idempotency_keys.lease_until IS NULL OR idempotency_keys.lease_until < ?))
			RETURNING token`, projectID, key, requestHash, c.Token, now.Add(lease), now, now.Add(-ttl), now), &token)
		if res.Error != nil {
			return nil, nil, translate(res.Error, "claim idempotency key")
		}
		if res.RowsAffected == 1 && token == c.Token {
			return c, nil, nil
		}
		var r IdempotencyRecord
		err := s.q(ctx).Where("project_id = ? AND key = ?", projectID, key).Take(&r).Error
		if err == nil {
			return nil, &r, nil
		}
		if err = translate(err, "read idempotency key"); !errors.Is(err, ErrNotFound) {
			return nil, nil, err
		}
	}
	return nil, nil, fmt.Errorf("store: claim idempotency key %s: it keeps changing", key)
}

// RenewIdempotencyKey extends a claim's lease to until, and reports false when the claim is no
// longer the caller's (or its response is recorded).
func (s *Store) RenewIdempotencyKey(ctx context.Context, c *IdempotencyClaim, until time.Time) (bool, error) {
	res := s.q(ctx).Model(&IdempotencyRecord{}).Where("project_id = ? AND key = ? AND token = ? AND status = 0", c.ProjectID, c.Key, c.Token).
		Update("lease_until", until.UTC())
	return res.RowsAffected == 1, translate(res.Error, "renew idempotency key")
}

// CompleteIdempotencyKey stores the response of the request that holds the claim.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, c *IdempotencyClaim, status int, contentType string, body []byte) error {
	return translate(s.q(ctx).Model(&IdempotencyRecord{}).Where("project_id = ? AND key = ? AND token = ?", c.ProjectID, c.Key, c.Token).
		Updates(map[string]any{"status": status, "content_type": contentType, "body": body}).Error,
		fmt.Sprintf("complete idempotency key %s", c.Key))
}

// ReleaseIdempotencyKey forgets a claim whose request produced nothing worth replaying (a server
// error before anything was committed), so the client may retry with the same key at once. A
// claim whose request committed its resource stays, for a retry to show it.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, c *IdempotencyClaim) error {
	return translate(s.q(ctx).Where("project_id = ? AND key = ? AND token = ? AND status = 0 AND resource_id IS NULL",
		c.ProjectID, c.Key, c.Token).Delete(&IdempotencyRecord{}).Error, "release idempotency key")
}

// PurgeIdempotencyKeys deletes the records created before cutoff and reports how many.
func (s *Store) PurgeIdempotencyKeys(ctx context.Context, cutoff time.Time) (int64, error) {
	res := s.q(ctx).Where("created_at < ?", cutoff.UTC()).Delete(&IdempotencyRecord{})
	return res.RowsAffected, translate(res.Error, "purge idempotency keys")
}

// recordCreated records, inside the caller's transaction, that the request whose claim ctx
// carries created resource id ("": nothing after all); ErrIdempotencyClaimLost when the claim is
// no longer the request's. Without a claim it does nothing.
func (s *Store) recordCreated(ctx context.Context, id string) error {
	c := claimOf(ctx)
	if c == nil {
		return nil
	}
	var ref *string
	if id != "" {
		ref = &id
	}
	res := s.q(ctx).Model(&IdempotencyRecord{}).Where("project_id = ? AND key = ? AND token = ? AND status = 0", c.ProjectID, c.Key, c.Token).
		Update("resource_id", ref)
	if res.Error != nil {
		return translate(res.Error, "record the resource of idempotency key "+c.Key)
	}
	if res.RowsAffected != 1 {
		return fmt.Errorf("record the resource of idempotency key %s: %w", c.Key, ErrIdempotencyClaimLost)
	}
	return nil
}

// creating runs write, which creates resource id ("": deletes what the request created), and records id with the request's claimed
// Idempotency-Key (see recordCreated) in one transaction: the caller's, or one of its own when
// ctx carries a claim. Without a claim, write runs as it is.
func (s *Store) creating(ctx context.Context, id string, write func(tx *Store) error) error {
	if claimOf(ctx) == nil {
		return write(s)
	}
	if sqlTx(s.db) != nil {
		if err := write(s); err != nil {
			return err
		}
		return s.recordCreated(ctx, id)
	}
	return s.Tx(ctx, func(tx *Store) error { return tx.creating(ctx, id, write) })
}
