package kit

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Runner is a set of background loops started by a Start method (the dispatch loops, the webhook
// deliverer, the wake-up listener); Stop ends them.
type Runner struct {
	cancel context.CancelCauseFunc
	// drain, when set, lets the loops finish what they have in flight before the context ends.
	drain func()
	wg    sync.WaitGroup
}

// errStopped is the cause of a runner's context once it is stopped.
var errStopped = errors.New("kit: stopped")

// NewRunner returns a Runner for loops to start with Go, the context they run in (it ends when
// the Runner is stopped) and, when drains, a channel that closes when Stop begins, so the loops
// take no more work and finish what they have in flight (nil otherwise: the loops only end with
// the context).
func NewRunner(ctx context.Context, drains bool) (r *Runner, loopCtx context.Context, draining <-chan struct{}) {
	ctx, cancel := context.WithCancelCause(ctx)
	r = &Runner{cancel: cancel}
	if drains {
		ch := make(chan struct{})
		var once sync.Once
		r.drain = func() { once.Do(func() { close(ch) }) }
		draining = ch
	}
	return r, ctx, draining
}

// Go runs loop in a goroutine of the Runner: Stop waits for it to return.
func (r *Runner) Go(loop func()) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		loop()
	}()
}

// Stop stops the loops: they take no more work and finish what they have in flight, until ctx
// ends, when what is left is abandoned (to be taken over once its lease ends).
func (r *Runner) Stop(ctx context.Context) error {
	if r.drain != nil {
		r.drain()
	}
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		r.cancel(errStopped)
		return nil
	case <-ctx.Done():
		r.cancel(errStopped)
		<-done
		return ctx.Err()
	}
}

// StopAndCancel stops the loops at once, abandoning what they have in flight, as a dying
// instance would.
func (r *Runner) StopAndCancel(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	_ = r.Stop(ctx)
	return nil
}

// Stopping reports whether draining has closed or ctx has ended.
func Stopping(ctx context.Context, draining <-chan struct{}) bool {
	select {
	case <-draining:
		return true
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

// ClaimFailed logs a loop's failed claim (unless the loop is stopping) and waits backoff doubled
// (at most 5 s), which it returns.
func ClaimFailed(ctx context.Context, draining <-chan struct{}, log *slog.Logger, what string, err error, backoff time.Duration) time.Duration {
	if ctx.Err() == nil {
		log.Warn(what, "err", err)
	}
	backoff = min(2*backoff, 5*time.Second)
	Sleep(ctx, draining, nil, nil, backoff)
	return backoff
}

// Sleep waits d, or until wake or more fires, draining closes or ctx ends.
func Sleep(ctx context.Context, draining, wake <-chan struct{}, more chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-wake:
	case <-more:
	case <-draining:
	case <-ctx.Done():
	}
}
