package kit

// Pending is how many calls wait for a flush of b (for the specs).
func (b *Batcher[T, R]) Pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending)
}
