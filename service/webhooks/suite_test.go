package webhooks_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The webhooks package's specs: the deliverer alone over a real database with its own clock (the
// retry schedule, the 5-day rule, the SSRF guard, restarts), the endpoint guard, and the body and
// signature of a delivery. The delivery of each event type through the whole API is specified in
// server/webhooks_test.go.
func TestWebhooks(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Webhooks Suite")
}
