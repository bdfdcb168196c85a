package service

import (
	"context"

	"github.com/switchboard/switchboard/carriers"
)

// call applies a voice call event. (Built by the voice work.)
func (r *Reports) call(ctx context.Context, carrier string, c *carriers.CallEvent) error {
	return ErrNotImplemented
}
