package sim

import "github.com/riverqueue/river"

// registerMessageWorkers adds the receipt workers. (Built by the messaging core.)
func (c *Carrier) registerMessageWorkers(*river.Workers) {}
