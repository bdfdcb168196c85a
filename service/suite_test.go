package service_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The service package's unit specs: business rules that need no database (segments, phone
// numbers, keywords). Rules that need one are specified through the API in server/.
func TestService(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Service Suite")
}
