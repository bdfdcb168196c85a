package store

// SetTidyOutboundEvery changes how many rows leave the outbound queue between two VACUUMs of it,
// for a spec; it returns the function that restores the setting.
func SetTidyOutboundEvery(n int64) (restore func()) {
	was := tidyOutboundEvery
	tidyOutboundEvery = n
	return func() { tidyOutboundEvery = was }
}

// OutboundVacuums counts the VACUUMs of the outbound queue this store has run.
func (s *Store) OutboundVacuums() int64 { return s.tidy.done.Load() }
