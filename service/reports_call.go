package service

import (
	"context"

	"github.com/switchboard/switchboard/carriers"
)

// call applies a voice call event (see Voice.apply).
func (r *Reports) call(ctx context.Context, carrier string, c *carriers.CallEvent) error {
	if r.voice == nil {
		return ErrNotImplemented
	}
	return r.voice.apply(ctx, carrier, c)
}
