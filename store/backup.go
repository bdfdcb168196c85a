package store

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// ErrBackupUnsupported means the database is not one Backup copies: PostgreSQL is backed up with
// its own tools (pg_dump), which the README describes.
var ErrBackupUnsupported = errors.New("store: backup copies SQLite databases only")

// Backup writes a consistent copy of a SQLite database to path while it is in use (VACUUM
// INTO: one read transaction, so writers carry on). Attachments and recordings are rows of the
// database, so the copy holds them. path must not exist.
func (s *Store) Backup(ctx context.Context, path string) error {
	if s.dialect != SQLite {
		return ErrBackupUnsupported
	}
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("store: backup: %s already exists", path)
	}
	if err := s.q(ctx).Exec("VACUUM INTO ?", path).Error; err != nil {
		return fmt.Errorf("store: backup: %w", err)
	}
	return nil
}
