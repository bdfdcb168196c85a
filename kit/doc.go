// Package kit holds the helpers that the store, the services and the carrier adapters share:
// time-ordered TypeIDs (NewID), the group commit (Batcher), trace context (Traceparent) and the
// runner of background loops (Runner). It imports nothing of Switchboard, so that an adapter
// (carriers/…) can use them without depending on the core; it is not a home for anything that
// knows about messages, numbers or the database.
package kit
