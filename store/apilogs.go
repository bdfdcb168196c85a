package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// APILog is one authenticated request, as the operator's `switchboard logs` shows it.
type APILog struct {
	ID             int64 `gorm:"primaryKey;autoIncrement"`
	ProjectID      string
	KeyID          string
	RequestID      string
	Method         string
	Path           string
	Status         int
	DurationMicros int64
	// Query is the request's query string (no "?"); IP and UserAgent are the client's.
	Query     string
	IP        string
	UserAgent string
	// ErrorType is the error envelope's type of a refused or failed request; empty on success.
	ErrorType string
	CreatedAt time.Time
}

// InsertAPILogs writes a batch of request logs: on PostgreSQL by COPY, in one statement
// (outside a caller's transaction; inside one by INSERT, apiLogRows to a statement), and on
// SQLite by INSERT, apiLogRowsSQLite to a statement (outside a transaction through
// database/sql's prepared statements: insertAPILogsSQLite). Either way the batch is written whole or not at all. The logs' IDs are
// not filled in.
func (s *Store) InsertAPILogs(ctx context.Context, logs []APILog) error {
	if len(logs) == 0 {
		return nil
	}
	if s.dialect == Postgres && !s.inTx() {
		return s.copyAPILogs(ctx, logs)
	}
	if s.dialect != Postgres && !s.inTx() {
		return translate(s.insertAPILogsSQLite(ctx, logs), "insert api logs")
	}
	rows := apiLogRows
	if s.dialect != Postgres {
		rows = apiLogRowsSQLite
	}
	return translate(s.q(ctx).CreateInBatches(logs, rows).Error, "insert api logs")
}

// insertAPILogsSQLite is InsertAPILogs on SQLite outside a transaction: apiLogRowsSQLite logs to
// a statement, each count of rows' statement prepared through database/sql once (apiLogStmts), in
// one transaction when there is more than one. It spares what gorm did for each batch: build the
// statement's text and its arguments by reflection, and scan back the ids it returned
// (BenchmarkInsertAPILogs: 10.5-10.7 µs a log against 13.4-13.9). SQLite still parses the INSERT
// at every run: the driver (glebarez/go-sqlite) keeps a prepared statement's text only and
// prepares it again each time, about a quarter of the writer's CPU in a profile of
// `-scenario api`.
func (s *Store) insertAPILogsSQLite(ctx context.Context, logs []APILog) error {
	db, err := s.db.DB()
	if err != nil {
		return err
	}
	// The statements are prepared before the transaction begins, on the pool.
	var parts [][]APILog
	var stmts []*sql.Stmt
	for start := 0; start < len(logs); start += apiLogRowsSQLite {
		part := logs[start:min(start+apiLogRowsSQLite, len(logs))]
		stmt, err := s.apiLogStmts.get(ctx, db, len(part))
		if err != nil {
			return err
		}
		parts, stmts = append(parts, part), append(stmts, stmt)
	}
	now := s.db.NowFunc()
	args := make([]any, 0, apiLogRowsSQLite*apiLogColumns)
	argsOf := func(part []APILog) []any {
		args = args[:0]
		for _, l := range part {
			at := l.CreatedAt
			if at.IsZero() {
				at = now
			}
			args = append(args, l.ProjectID, l.KeyID, l.RequestID, l.Method, l.Path, l.Status,
				l.DurationMicros, l.Query, l.IP, l.UserAgent, l.ErrorType, at)
		}
		return args
	}
	if len(parts) == 1 {
		_, err := stmts[0].ExecContext(ctx, argsOf(parts[0])...)
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for i, part := range parts {
		if _, err := tx.StmtContext(ctx, stmts[i]).ExecContext(ctx, argsOf(part)...); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// apiLogColumns is how many values a log takes in insertAPILogsSQLite's INSERT.
const apiLogColumns = 12

// sqlStmts are insertAPILogsSQLite's prepared statements, by count of rows (database/sql prepares
// each again on each connection it runs on, and keeps it there).
type sqlStmts struct {
	mu    sync.Mutex
	byLen map[int]*sql.Stmt
}

// get returns the prepared INSERT of n logs, preparing it on first use.
func (c *sqlStmts) get(ctx context.Context, db *sql.DB, n int) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.byLen[n]; ok {
		return st, nil
	}
	var b strings.Builder
	b.WriteString(`INSERT INTO api_logs (project_id, key_id, request_id, method, path, status, duration_micros, query, ip,
		user_agent, error_type, created_at) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?" + strings.Repeat(", ?", apiLogColumns-1) + ")")
	}
	st, err := db.PrepareContext(ctx, b.String())
	if err != nil {
		return nil, err
	}
	if c.byLen == nil {
		c.byLen = map[int]*sql.Stmt{}
	}
	c.byLen[n] = st
	return st, nil
}

// apiLogCopy is the COPY that copyAPILogs runs, its rows in PostgreSQL's binary format
// (apiLogCopyRows) in the columns' order.
const apiLogCopy = `COPY api_logs (project_id, key_id, request_id, method, path, status, duration_micros, query, ip,
	user_agent, error_type, created_at) FROM STDIN (FORMAT binary)`

// copyAPILogs writes logs by COPY: about 4 µs of PostgreSQL's time per row against 9 for a
// multi-row INSERT, which PostgreSQL also parses and plans afresh for each count of rows. The
// store writes the binary rows itself (apiLogCopyRows) into one buffer: pgx's CopyFrom boxed each
// of a row's twelve values (about ten allocations a row) and described the table's columns in a
// round trip of its own before each COPY.
func (s *Store) copyAPILogs(ctx context.Context, logs []APILog) error {
	data := apiLogCopyRows(logs, time.Now())
	err := s.pgxConn(ctx, func(c *pgx.Conn) error {
		_, err := c.PgConn().CopyFrom(ctx, bytes.NewReader(data), apiLogCopy)
		return err
	})
	return translate(err, "copy api logs")
}

// pgCopyHeader starts a binary COPY stream: its signature, no flags, no header extension.
const pgCopyHeader = "PGCOPY\n\xff\r\n\x00" + "\x00\x00\x00\x00" + "\x00\x00\x00\x00"

// apiLogCopyRows is logs as a binary COPY stream of apiLogCopy's columns (text, text, text,
// text, text, integer, bigint, text, text, text, text, timestamptz), written as pgx writes each
// type; a zero CreatedAt is now, as gorm's insert would have it.
func apiLogCopyRows(logs []APILog, now time.Time) []byte {
	const fields = 12
	size := len(pgCopyHeader) + 2
	for i := range logs {
		l := &logs[i]
		size += 2 + fields*4 + 4 + 8 + 8 + len(l.ProjectID) + len(l.KeyID) + len(l.RequestID) + len(l.Method) + len(l.Path) +
			len(l.Query) + len(l.IP) + len(l.UserAgent) + len(l.ErrorType)
	}
	buf := make([]byte, 0, size)
	buf = append(buf, pgCopyHeader...)
	for i := range logs {
		l := &logs[i]
		at := l.CreatedAt
		if at.IsZero() {
			at = now
		}
		buf = binary.BigEndian.AppendUint16(buf, fields)
		for _, s := range [...]string{l.ProjectID, l.KeyID, l.RequestID, l.Method, l.Path} {
			buf = appendText(buf, s)
		}
		buf = binary.BigEndian.AppendUint32(buf, 4)
		buf = binary.BigEndian.AppendUint32(buf, uint32(int32(l.Status)))
		buf = binary.BigEndian.AppendUint32(buf, 8)
		buf = binary.BigEndian.AppendUint64(buf, uint64(l.DurationMicros))
		for _, s := range [...]string{l.Query, l.IP, l.UserAgent, l.ErrorType} {
			buf = appendText(buf, s)
		}
		buf = appendTimestamptz(buf, at)
	}
	// The trailer: a field count of -1.
	return binary.BigEndian.AppendUint16(buf, 0xFFFF)
}

// apiLogRows is how many logs one INSERT of InsertAPILogs writes on PostgreSQL (inside a
// transaction), and apiLogRowsSQLite on SQLite, whose driver (glebarez/go-sqlite) finds each
// argument it binds by going through all of them: its cost grows with the square of a
// statement's arguments (12 per log). Writing 500 logs cost about 105 µs per log in 500-row
// statements, 17–19 µs in 50 to 128-row ones, and more again below 32 rows (each statement's
// own cost).
const (
	apiLogRows       = 500
	apiLogRowsSQLite = 64
)

// ListAPILogs returns a project's most recent request logs, newest first.
func (s *Store) ListAPILogs(ctx context.Context, projectID string, limit int) ([]APILog, error) {
	if limit <= 0 {
		limit = 50
	}
	var out []APILog
	if err := s.q(ctx).Where("project_id = ?", projectID).Order("id DESC").Limit(limit).Find(&out).Error; err != nil {
		return nil, translate(err, "list api logs")
	}
	return out, nil
}
