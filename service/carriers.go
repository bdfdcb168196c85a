package service

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/switchboard/switchboard/carriers"
)

// Carriers holds the installation's carrier adapters by name and says which one provides new
// numbers. A number records the carrier that provides it, so traffic for it goes there even after
// the default changes.
type Carriers struct {
	byName map[string]carriers.Carrier
	def    string
}

// NewCarriers returns the set of adapters; def provides new numbers and campaigns.
func NewCarriers(def carriers.Carrier, others ...carriers.Carrier) (*Carriers, error) {
	if def == nil {
		return nil, errors.New("service: NewCarriers needs a default carrier")
	}
	c := &Carriers{byName: map[string]carriers.Carrier{def.Name(): def}, def: def.Name()}
	for _, o := range others {
		if _, dup := c.byName[o.Name()]; dup {
			return nil, fmt.Errorf("service: two carriers named %q", o.Name())
		}
		c.byName[o.Name()] = o
	}
	return c, nil
}

// Default returns the carrier that provides new numbers.
func (c *Carriers) Default() carriers.Carrier { return c.byName[c.def] }

// Get returns the adapter with this name.
func (c *Carriers) Get(name string) (carriers.Carrier, error) {
	if name == "" {
		name = c.def
	}
	if cr, ok := c.byName[name]; ok {
		return cr, nil
	}
	return nil, fmt.Errorf("service: no carrier named %q is configured", name)
}

// TypeCarrierUnsupported is the error type of a request that the carrier behind it cannot serve.
const TypeCarrierUnsupported = "carrier_unsupported"

// All returns every adapter, in the order of their names.
func (c *Carriers) All() []carriers.Carrier {
	out := make([]carriers.Carrier, 0, len(c.byName))
	for _, cr := range c.byName {
		out = append(out, cr)
	}
	slices.SortFunc(out, func(a, b carriers.Carrier) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// ErrCapability answers a request that the carrier behind it cannot serve.
func ErrCapability(carrier, capability string) *Error {
	return Errorf(TypeCarrierUnsupported, "the %s carrier does not support %s", carrier, capability)
}

// Messenger returns the named carrier's messaging capability.
func (c *Carriers) Messenger(name string) (carriers.Messenger, error) {
	return capability[carriers.Messenger](c, name, "messaging")
}

// Inventory returns the named carrier's number inventory.
func (c *Carriers) Inventory(name string) (carriers.NumberInventory, error) {
	return capability[carriers.NumberInventory](c, name, "number inventory")
}

// Registry returns the named carrier's campaign registry.
func (c *Carriers) Registry(name string) (carriers.CampaignRegistry, error) {
	return capability[carriers.CampaignRegistry](c, name, "campaign registration")
}

// BrandVerifier returns the named carrier's brand verification (a registry capability).
func (c *Carriers) BrandVerifier(name string) (carriers.BrandVerifier, error) {
	return capability[carriers.BrandVerifier](c, name, "brand verification messages")
}

func capability[T any](c *Carriers, name, what string) (T, error) {
	var zero T
	cr, err := c.Get(name)
	if err != nil {
		return zero, err
	}
	t, ok := cr.(T)
	if !ok {
		return zero, ErrCapability(cr.Name(), what)
	}
	return t, nil
}
