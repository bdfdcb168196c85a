package server

import (
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/gen"
)

// createsNothingKept are the POST operations that answer 201 without a resource for an
// Idempotency-Key to record: a user token is not stored, and adding an audience member again
// changes nothing.
var createsNothingKept = map[string]bool{"POST /users/:user_id/tokens": true, "POST /audiences/:audience_id/contacts": true}

var _ = Describe("Idempotency-Key replays", func() {
	It("can show again the resource of every operation that creates one", func() {
		spec, err := gen.GetSwagger()
		Expect(err).NotTo(HaveOccurred())
		var missing []string
		for path, item := range spec.Paths.Map() {
			op := item.Post
			if op == nil || op.Responses.Status(http.StatusCreated) == nil {
				continue
			}
			route := "POST " + strings.NewReplacer("{", ":", "}", "").Replace(path)
			if _, ok := created[route]; !ok && !createsNothingKept[route] {
				missing = append(missing, route)
			}
		}
		Expect(missing).To(BeEmpty(), "a POST that creates a resource needs a way to show it again in `created`")
	})
})
