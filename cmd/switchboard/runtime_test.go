package main

import (
	"io"
	"log/slog"
	"os"
	"runtime/debug"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("the Go runtime settings of serve", func() {
	// unsetenv removes a variable for the spec.
	unsetenv := func(name string) {
		old, had := os.LookupEnv(name)
		Expect(os.Unsetenv(name)).To(Succeed())
		DeferCleanup(func() {
			if had {
				_ = os.Setenv(name, old)
			}
		})
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	It("default to a GC target of 800 and a limit of 90% of the container's memory", func() {
		cfg, err := serveConfig()
		Expect(err).NotTo(HaveOccurred())
		Expect(cfg.GCPercent).To(Equal(800))
		Expect(cfg.MemoryLimit).To(Equal("auto"))
		Expect(cfg.memoryLimit).To(Equal(int64(-1)))
	})

	DescribeTable("memory-limit takes auto, none or a size as GOMEMLIMIT writes it",
		func(value string, want int64) {
			cfg, err := serveConfig("--memory-limit", value)
			Expect(err).NotTo(HaveOccurred())
			Expect(cfg.memoryLimit).To(Equal(want))
		},
		Entry("auto", "auto", int64(-1)),
		Entry("none", "none", int64(0)),
		Entry("0", "0", int64(0)),
		Entry("bytes", "1048576", int64(1<<20)),
		Entry("B", "4096B", int64(4096)),
		Entry("KiB", "64KiB", int64(64<<10)),
		Entry("MiB", "512MiB", int64(512<<20)),
		Entry("GiB", "2GiB", int64(2<<30)),
		Entry("TiB", "1TiB", int64(1<<40)),
	)

	DescribeTable("refuses a value that is not a setting of its kind, naming it",
		func(flag, value, says string) {
			_, err := serveConfig("--"+flag, value)
			Expect(err).To(MatchError(ContainSubstring(says)))
		},
		Entry("a GC target of 0", "gc-percent", "0", "SWITCHBOARD_GC_PERCENT / --gc-percent: 0 is not a positive integer"),
		Entry("a negative GC target", "gc-percent", "-1", "SWITCHBOARD_GC_PERCENT / --gc-percent: -1 is not a positive integer"),
		Entry("a size in decimal units", "memory-limit", "1GB", `SWITCHBOARD_MEMORY_LIMIT / --memory-limit: "1GB" is not auto, none or a size`),
		Entry("a negative size", "memory-limit", "-5MiB", `SWITCHBOARD_MEMORY_LIMIT / --memory-limit: "-5MiB" is not auto`),
		Entry("words", "memory-limit", "lots", `SWITCHBOARD_MEMORY_LIMIT / --memory-limit: "lots" is not auto`),
	)

	It("sets the GC target and the memory limit while serve runs, and restores them after", func() {
		unsetenv("GOGC")
		unsetenv("GOMEMLIMIT")
		before, beforeLimit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
		DeferCleanup(func() { debug.SetGCPercent(before); debug.SetMemoryLimit(beforeLimit) })
		cfg, err := serveConfig("--gc-percent", "250", "--memory-limit", "3GiB")
		Expect(err).NotTo(HaveOccurred())
		restore := applyRuntimeSettings(cfg, quiet)
		Expect(debug.SetGCPercent(250)).To(Equal(250))
		Expect(debug.SetMemoryLimit(-1)).To(Equal(int64(3 << 30)))
		restore()
		Expect(debug.SetGCPercent(100)).To(Equal(100))
		Expect(debug.SetMemoryLimit(-1)).To(Equal(beforeLimit))
	})

	It("leaves the GC target and the memory limit to GOGC and GOMEMLIMIT when they are set", func() {
		setenv("GOGC", "150")
		setenv("GOMEMLIMIT", "1GiB")
		before, beforeLimit := debug.SetGCPercent(150), debug.SetMemoryLimit(1<<30)
		DeferCleanup(func() { debug.SetGCPercent(before); debug.SetMemoryLimit(beforeLimit) })
		cfg, err := serveConfig("--gc-percent", "250", "--memory-limit", "3GiB")
		Expect(err).NotTo(HaveOccurred())
		restore := applyRuntimeSettings(cfg, quiet)
		Expect(debug.SetGCPercent(150)).To(Equal(150))
		Expect(debug.SetMemoryLimit(-1)).To(Equal(int64(1 << 30)))
		restore()
	})
})
