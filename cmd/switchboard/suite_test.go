package main

import (
	"io"
	"os"
	"path/filepath"
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

// serveConfig reads serve's configuration as serve does, from args, the environment and the
// configuration file, without starting anything.
func serveConfig(args ...string) (*Config, error) {
	a := newApp(io.Discard, io.Discard)
	cmd, rest, err := a.rootCommand().Find(append([]string{"serve"}, args...))
	if err != nil {
		return nil, err
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return nil, a.flagError(cmd, err)
	}
	return a.cfg, a.load(cmd, scopeDomain, scopeServe)
}

var _ = AfterSuite(func() {
	if staticPath != "" {
		_ = os.RemoveAll(filepath.Dir(staticPath))
	}
})
