package sim

import "github.com/riverqueue/river"

// registerCampaignWorkers adds the review workers. (Built by the phone numbers and campaigns work.)
func (c *Carrier) registerCampaignWorkers(*river.Workers) {}
