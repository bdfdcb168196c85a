package kit

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// tracer makes the spans of statement batches; it is the process's current one (a no-op unless tracing is on), looked up at each use.
func tracer() trace.Tracer { return otel.Tracer("github.com/switchboard/switchboard/kit") }

// Batcher coalesces concurrent calls into shared transactions (a group commit): each call of Do
// waits while its item joins the next batch, and one flush handles every item of the batch, so
// that N concurrent job workers cost one round of statements and one commit instead of N. A lone
// call is flushed at once, alone: batching adds no delay, it only happens while flushes are busy.
//
// The flush sees one item per call and returns one result per item, in order; a flush error
// fails the whole batch, whose items are then flushed again one by one, so that one bad item
// cannot hold back the others.
type Batcher[T, R any] struct {
	// flush handles a batch; it returns one result per item, in order.
	flush func(ctx context.Context, items []T) ([]R, error)
	// max is the most items of one flush; parallel the most flushes at a time.
	max, parallel int
	// linger is how long a flush of several items but fewer than max holds its turn (see Linger).
	linger time.Duration

	mu      sync.Mutex
	pending []*batchCall[T, R]
	active  int
	// calls are Do's calls, reused (a call and its channel were two allocations a call).
	calls sync.Pool
}

// batchCall is one call of Do. Its flush sends one value on done (buffered), which Do receives
// before it reuses the call.
type batchCall[T, R any] struct {
	ctx  context.Context
	item T
	res  R
	err  error
	done chan struct{}
}

// flushTimeout bounds one flush, which does not end with the context of the call that started
// it: the batch holds other calls too.
const flushTimeout = 30 * time.Second

// NewBatcher returns a batcher of at most max items per flush and at most parallel flushes at a
// time.
func NewBatcher[T, R any](max, parallel int, flush func(ctx context.Context, items []T) ([]R, error)) *Batcher[T, R] {
	return &Batcher[T, R]{flush: flush, max: max, parallel: parallel}
}

// Linger makes each flush of several items but fewer than max, once done, wait d before the
// batcher's next flush in its turn (its calls return at once): under a steady stream of calls that
// come in bursts, the next flush then takes what came in over the pause, in fewer and larger
// flushes, where each flush costs much beside its items. A lone call, a full flush or a failed
// one does not wait, so that after a quiet spell a call is flushed at once, and a backlog as fast
// as without. It returns b.
func (b *Batcher[T, R]) Linger(d time.Duration) *Batcher[T, R] {
	b.linger = d
	return b
}

// Do adds item to the next batch and returns its result once that batch is flushed.
func (b *Batcher[T, R]) Do(ctx context.Context, item T) (R, error) {
	c, _ := b.calls.Get().(*batchCall[T, R])
	if c == nil {
		c = &batchCall[T, R]{done: make(chan struct{}, 1)}
	}
	c.ctx, c.item = ctx, item
	b.mu.Lock()
	b.pending = append(b.pending, c)
	start := b.active < b.parallel
	if start {
		b.active++
	}
	b.mu.Unlock()
	if start {
		go b.run()
	}
	<-c.done
	res, err := c.res, c.err
	*c = batchCall[T, R]{done: c.done}
	b.calls.Put(c)
	return res, err
}

// run flushes batches until none is pending.
func (b *Batcher[T, R]) run() {
	for {
		b.mu.Lock()
		n := min(len(b.pending), b.max)
		if n == 0 {
			b.active--
			b.mu.Unlock()
			return
		}
		calls := make([]*batchCall[T, R], n)
		copy(calls, b.pending)
		b.pending = append(b.pending[:0:0], b.pending[n:]...)
		b.mu.Unlock()
		if n := b.flushCalls(calls); b.linger > 0 && n > 1 && n < b.max {
			time.Sleep(b.linger)
		}
	}
}

// flushCalls flushes calls and returns how many items one flush handled together: 0 when the
// batch failed and its items were flushed one by one.
func (b *Batcher[T, R]) flushCalls(calls []*batchCall[T, R]) int {
	defer func() {
		for _, c := range calls {
			c.done <- struct{}{} // c is its Do's again: not to be touched after this
		}
	}()
	// Calls whose caller gave up are dropped; the others share the flush.
	live := calls[:0:0]
	for _, c := range calls {
		if err := c.ctx.Err(); err != nil {
			c.err = err
			continue
		}
		live = append(live, c)
	}
	if len(live) == 0 {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(live[0].ctx), flushTimeout)
	defer cancel()
	// One span per statement batch while tracing is on (Traced): a child of the first caller's
	// span, linked to the others'.
	var span trace.Span = noop.Span{}
	if Traced() {
		links := make([]trace.Link, 0, len(live))
		for _, c := range live[1:] {
			if sc := trace.SpanContextFromContext(c.ctx); sc.IsValid() {
				links = append(links, trace.Link{SpanContext: sc})
			}
		}
		ctx, span = tracer().Start(ctx, "store.batch", trace.WithLinks(links...),
			trace.WithAttributes(attribute.Int("switchboard.batch.items", len(live))))
	}
	defer span.End()
	items := make([]T, len(live))
	for i, c := range live {
		items[i] = c.item
	}
	res, err := b.flush(ctx, items)
	if err != nil {
		span.RecordError(err)
	}
	if err == nil {
		for i, c := range live {
			c.res = res[i]
		}
		return len(live)
	}
	if len(live) == 1 {
		live[0].err = err
		return 0
	}
	for _, c := range live {
		r, err := b.flush(ctx, []T{c.item})
		if err != nil {
			c.err = err
			continue
		}
		c.res = r[0]
	}
	return 0
}
