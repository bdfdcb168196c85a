package main

import (
	"os"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestSwitchboardCommand(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "switchboard command Suite")
}

// The specs configure the command with flags only: SWITCHBOARD_* variables of the environment that
// runs the tests (a developer's shell, CI) must not leak into them. Specs that test the variables
// set them themselves.
var _ = BeforeSuite(func() {
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "SWITCHBOARD_") && name != "SWITCHBOARD_TEST_DATABASE_URL" {
			Expect(os.Unsetenv(name)).To(Succeed())
			DeferCleanup(os.Setenv, name, value)
		}
	}
})
