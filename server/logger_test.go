package server_test

import (
	"io"
	"log/slog"
	"time"
)

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func timeNow() time.Time { return time.Now() }
