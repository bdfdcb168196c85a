package kit_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/kit"
)

var _ = Describe("Batcher", func() {
	It("flushes a lone call at once, alone", func(ctx context.Context) {
		var sizes []int
		b := kit.NewBatcher(10, 1, func(_ context.Context, items []int) ([]int, error) {
			sizes = append(sizes, len(items))
			out := make([]int, len(items))
			for i, n := range items {
				out[i] = n * 2
			}
			return out, nil
		})
		Expect(b.Do(ctx, 21)).To(Equal(42))
		Expect(sizes).To(Equal([]int{1}))
	})

	It("shares a flush among calls that arrive while one is busy, each getting its own result", func(ctx context.Context) {
		release := make(chan struct{})
		var (
			mu    sync.Mutex
			sizes []int
		)
		b := kit.NewBatcher(100, 1, func(_ context.Context, items []int) ([]int, error) {
			mu.Lock()
			sizes = append(sizes, len(items))
			first := len(sizes) == 1
			mu.Unlock()
			if first {
				<-release // hold the first flush until the others queue behind it
			}
			out := make([]int, len(items))
			for i, n := range items {
				out[i] = n + 1000
			}
			return out, nil
		})
		results := make([]int, 51)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[0], _ = b.Do(ctx, 0)
		}()
		Eventually(func() int { mu.Lock(); defer mu.Unlock(); return len(sizes) }).Should(Equal(1))
		var queued sync.WaitGroup
		for i := 1; i <= 50; i++ {
			wg.Add(1)
			queued.Add(1)
			go func() {
				defer wg.Done()
				queued.Done()
				results[i], _ = b.Do(ctx, i)
			}()
		}
		queued.Wait()
		close(release)
		wg.Wait()
		for i, r := range results {
			Expect(r).To(Equal(i + 1000))
		}
		mu.Lock()
		defer mu.Unlock()
		Expect(sizes[0]).To(Equal(1))
		Expect(len(sizes)).To(BeNumerically("<", 51), "the calls queued behind the first flush share flushes")
		total := 0
		for _, n := range sizes {
			total += n
		}
		Expect(total).To(Equal(51))
	})

	It("retries a failed batch item by item, so one bad item fails alone", func(ctx context.Context) {
		bad := errors.New("bad item")
		release := make(chan struct{})
		var once sync.Once
		b := kit.NewBatcher(100, 1, func(_ context.Context, items []int) ([]int, error) {
			once.Do(func() { <-release })
			for _, n := range items {
				if n == 13 {
					return nil, bad
				}
			}
			return items, nil
		})
		errs := make([]error, 20)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[0] = b.Do(ctx, 0) }()
		for i := 1; i < 20; i++ {
			wg.Add(1)
			go func() { defer wg.Done(); _, errs[i] = b.Do(ctx, i) }()
		}
		close(release)
		wg.Wait()
		for i, err := range errs {
			if i == 13 {
				Expect(err).To(MatchError(bad))
			} else {
				Expect(err).NotTo(HaveOccurred(), "item %d", i)
			}
		}
	})

	It("answers a call whose context is done with its error, without flushing it", func(ctx context.Context) {
		done, cancel := context.WithCancel(ctx)
		cancel()
		flushed := 0
		b := kit.NewBatcher(10, 1, func(_ context.Context, items []int) ([]int, error) {
			flushed += len(items)
			return items, nil
		})
		_, err := b.Do(done, 1)
		Expect(err).To(MatchError(context.Canceled))
		Expect(flushed).To(Equal(0))
	})
	It("with a linger, returns a partial flush's calls at once and holds the next flush that long", func(ctx context.Context) {
		const linger = 300 * time.Millisecond
		release := make(chan struct{})
		var (
			mu     sync.Mutex
			log    []string
			starts []time.Time
		)
		note := func(s string) { mu.Lock(); defer mu.Unlock(); log = append(log, s) }
		b := kit.NewBatcher(10, 1, func(_ context.Context, items []int) ([]int, error) {
			mu.Lock()
			log = append(log, fmt.Sprintf("flush %v", items))
			starts = append(starts, time.Now())
			first := len(starts) == 1
			mu.Unlock()
			if first {
				<-release // hold the first flush until two calls queue behind it
			}
			return items, nil
		}).Linger(linger)
		var wg sync.WaitGroup
		wg.Go(func() { _, _ = b.Do(ctx, 0) })
		Eventually(func() int { mu.Lock(); defer mu.Unlock(); return len(starts) }).Should(Equal(1))
		var queued sync.WaitGroup
		for i := 1; i <= 2; i++ {
			queued.Add(1)
			wg.Go(func() { queued.Done(); _, _ = b.Do(ctx, i); note(fmt.Sprintf("returned %d", i)) })
		}
		queued.Wait()
		Eventually(b.Pending).Should(Equal(2))
		close(release)
		wg.Wait() // the flush of the two returned; the batcher lingers
		wg.Go(func() { _, _ = b.Do(ctx, 3) })
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		Expect(log[0]).To(Equal("flush [0]"), "a lone call does not linger")
		Expect(log[1]).To(SatisfyAny(Equal("flush [1 2]"), Equal("flush [2 1]")))
		Expect(log[2:4]).To(ConsistOf("returned 1", "returned 2"), "the partial flush's calls return before the next flush")
		Expect(log[4]).To(Equal("flush [3]"))
		Expect(starts[2].Sub(starts[1])).To(BeNumerically(">=", linger), "the next flush waits the linger")
	})
})
