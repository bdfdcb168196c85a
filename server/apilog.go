package server

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchboard/switchboard/store"
)

// apiLogWriter takes request logs off the hot path: requests hand them to a buffered channel and
// one goroutine writes them in batches. When the buffer is full a log is dropped and counted
// (switchboard_api_logs_dropped_total) rather than slowing the API down.
type apiLogWriter struct {
	store   *store.Store
	log     *slog.Logger
	ch      chan store.APILog
	flushCh chan chan struct{}
	dropped prometheus.Counter
	done    chan struct{}
	once    sync.Once
}

const (
	apiLogBuffer   = 8192
	apiLogBatch    = 500
	apiLogInterval = 200 * time.Millisecond
)

func newAPILogWriter(st *store.Store, log *slog.Logger, dropped prometheus.Counter) *apiLogWriter {
	w := &apiLogWriter{
		store: st, log: log, dropped: dropped,
		ch: make(chan store.APILog, apiLogBuffer), flushCh: make(chan chan struct{}), done: make(chan struct{}),
	}
	go w.run()
	return w
}

func (w *apiLogWriter) record(l store.APILog) {
	select {
	case w.ch <- l:
	default:
		w.dropped.Inc()
	}
}

func (w *apiLogWriter) run() {
	defer close(w.done)
	tick := time.NewTicker(apiLogInterval)
	defer tick.Stop()
	batch := make([]store.APILog, 0, apiLogBatch)
	write := func() {
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := w.store.InsertAPILogs(ctx, batch); err != nil {
			w.log.Error("write api logs", "count", len(batch), "err", err)
		}
		cancel()
		batch = batch[:0]
	}
	drain := func() {
		for {
			select {
			case l := <-w.ch:
				batch = append(batch, l)
				if len(batch) >= apiLogBatch {
					write()
				}
			default:
				write()
				return
			}
		}
	}
	for {
		select {
		case l, ok := <-w.ch:
			if !ok {
				write()
				return
			}
			batch = append(batch, l)
			if len(batch) >= apiLogBatch {
				write()
			}
		case <-tick.C:
			write()
		case ack := <-w.flushCh:
			drain()
			close(ack)
		}
	}
}

// flush writes every log recorded so far.
func (w *apiLogWriter) flush() {
	ack := make(chan struct{})
	select {
	case w.flushCh <- ack:
		<-ack
	case <-w.done:
	}
}

// close writes what is buffered and stops the writer.
func (w *apiLogWriter) close() {
	w.once.Do(func() { close(w.ch) })
	<-w.done
}
