// Package kit holds the two helpers that the store and the carrier adapters share: time-ordered
// TypeIDs (NewID) and the group commit (Batcher). It imports nothing of Switchboard, so that an
// adapter (carriers/…) can use them without depending on the core; it is not a home for anything
// that knows about messages, numbers or the database.
package kit
