package store

import (
	"context"
	"database/sql"
	"sync"

	"github.com/jackc/pgx/v5"
)

// A pinned store runs its statements through pgx (the hot paths on PostgreSQL) on one connection
// of the pool that it holds, instead of on whichever connection the pool hands out for each
// statement. PostgreSQL keeps a prepared statement's plan per connection, and drops every plan that
// reads a table whenever that table's row in pg_class changes, which every VACUUM or ANALYZE of it
// does: the store vacuums the queues every tidyQueueEvery rows (queue_tidy.go), so at full load the
// claim of the outbound queue and the record of the submissions, which had run on most of the
// pool's 40 connections, were planned again on each of them about once a second (in an e2e run
// with pg_stat_statements.track_planning: 438 plans for 1,416 claims at 0.93 ms each, 470 for 918
// records at 0.48 ms; 12 µs of PostgreSQL per message). A dispatch loop runs those statements on
// its own pinned connection, where they are planned again once per VACUUM.

// pinnedConn is the connection a pinned store holds; taken from the pool when first needed.
type pinnedConn struct {
	mu   sync.Mutex
	pool *sql.DB
	conn *sql.Conn
}

// Pinned returns a copy of the store whose statements through pgx run on one connection that the
// copy holds (PostgreSQL; on SQLite, the store itself), and the function that gives the connection
// back to the pool (the copy takes another should it be used again). A connection on which a
// statement failed goes back to the pool at once (the pool closes it if it broke), and the next
// statement takes another. Statements through gorm and transactions (Tx) use the pool as before.
func (s *Store) Pinned() (*Store, func()) {
	if s.dialect != Postgres {
		return s, func() {}
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return s, func() {}
	}
	c := *s
	c.pin = &pinnedConn{pool: sqlDB}
	return &c, c.pin.release
}

// run runs fn on the pinned connection, one call at a time.
func (p *pinnedConn) run(ctx context.Context, fn func(c *pgx.Conn) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil {
		conn, err := p.pool.Conn(ctx)
		if err != nil {
			return translate(err, "connection")
		}
		p.conn = conn
	}
	err := rawPgx(p.conn, fn)
	if err != nil {
		_ = p.conn.Close()
		p.conn = nil
	}
	return err
}

// release gives the connection back to the pool.
func (p *pinnedConn) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn != nil {
		_ = p.conn.Close()
		p.conn = nil
	}
}
