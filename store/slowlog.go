package store

import (
	"context"
	"log/slog"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// slowQueryLog is gorm's logger, through the store's slog logger: a statement that takes longer
// than its threshold is logged at warn with its duration and rows, its SQL with placeholders and
// never its arguments (which may hold a webhook secret or a message body). gorm's own messages
// are dropped: every error is returned to, and reported by, the caller.
type slowQueryLog struct {
	log       *slog.Logger
	threshold time.Duration
}

var (
	_ logger.Interface  = slowQueryLog{}
	_ gorm.ParamsFilter = slowQueryLog{}
)

// LogMode is part of gorm's logger interface; the level is the slog handler's.
func (l slowQueryLog) LogMode(logger.LogLevel) logger.Interface { return l }

// Info drops gorm's informational messages.
func (slowQueryLog) Info(context.Context, string, ...any) {}

// Warn drops gorm's warnings.
func (slowQueryLog) Warn(context.Context, string, ...any) {}

// Error drops gorm's error messages: the caller gets the error.
func (slowQueryLog) Error(context.Context, string, ...any) {}

// Trace logs a statement slower than the threshold.
func (l slowQueryLog) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), _ error) {
	elapsed := time.Since(begin)
	if l.threshold <= 0 || elapsed < l.threshold {
		return
	}
	sql, rows := fc()
	l.log.LogAttrs(ctx, slog.LevelWarn, "slow query", slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
		slog.Int64("rows", rows), slog.String("sql", sql))
}

// ParamsFilter keeps the statement's placeholders: arguments are never rendered into a log.
func (slowQueryLog) ParamsFilter(_ context.Context, sql string, _ ...any) (string, []any) {
	return sql, nil
}
