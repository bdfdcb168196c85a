package service

import (
	"context"

	"github.com/switchboard/switchboard/carriers"
)

// receipt applies a delivery receipt. (Built by the messaging core.)
func (r *Reports) receipt(ctx context.Context, carrier string, rc *carriers.Receipt) error {
	return ErrNotImplemented
}

// inbound stores a message a handset sent. (Built by the messaging core.)
func (r *Reports) inbound(ctx context.Context, carrier string, m *carriers.InboundMessage) error {
	return ErrNotImplemented
}
