package main

import (
	"fmt"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// The garbage collector's settings for serve. At full load the server allocates a few hundred
// megabytes a second (request and response bodies, statements' arguments, webhook bodies) over a
// live heap of about twenty megabytes; at Go's default GOGC of 100 the collector then ran about
// ten times a second and took 10–15% of the process's CPU, at 400 about 5–6% (e2e bench, 5,000
// messages/s), at 800 about 2.5–3.5%. A higher target trades memory for that CPU: the heap may grow
// to nine times the live data between collections. The soft memory limit keeps the trade inside
// the machine or container: near the limit the collector works as hard as it must, whatever the
// target.

// defaultGCPercent is the default of gc-percent (Go's GOGC) for serve.
const defaultGCPercent = 800

// memoryLimitShare is the part of a container's memory limit that memory-limit "auto" takes as
// the soft limit, leaving room for what the Go runtime does not count (stacks in use by cgo, the
// binary, the kernel's buffers charged to the container).
const memoryLimitShare = 0.9

// cgroupMemoryFiles are where the container's memory limit is read, cgroup v2 first then v1.
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// parseMemoryLimit reads memory-limit: "auto", "none" (or 0), or a size in bytes with an optional
// unit, as Go's GOMEMLIMIT takes it (B, KiB, MiB, GiB, TiB). It returns the limit in bytes,
// 0 for none, or -1 for auto.
func parseMemoryLimit(v string) (int64, error) {
	v = strings.TrimSpace(v)
	switch strings.ToLower(v) {
	case "auto":
		return -1, nil
	case "none", "0":
		return 0, nil
	}
	units := []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	num, mult := v, int64(1)
	for _, u := range units {
		if strings.HasSuffix(v, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(v, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not auto, none or a size such as 1GiB or 512MiB", v)
	}
	return n * mult, nil
}

// containerMemoryLimit returns the memory limit of the cgroup this process runs in, 0 when there
// is none (or it cannot be read).
func containerMemoryLimit() int64 {
	for _, f := range cgroupMemoryFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		// v2 says "max" for no limit; v1 says a number near 2^63.
		if err != nil || n <= 0 || n >= 1<<62 {
			return 0
		}
		return n
	}
	return 0
}

// applyRuntimeSettings sets the garbage collector's target and soft memory limit for serve from
// cfg, except where the GOGC or GOMEMLIMIT variable is set: the Go runtime has applied those
// itself, and an operator's explicit runtime setting wins. It logs what it set and returns a
// function that restores the previous settings.
func applyRuntimeSettings(cfg *Config, log *slog.Logger) (restore func()) {
	var undo []func()
	if v := os.Getenv("GOGC"); v != "" {
		log.Info("go runtime: GOGC is set; gc-percent is not applied", "GOGC", v)
	} else {
		prev := debug.SetGCPercent(cfg.GCPercent)
		undo = append(undo, func() { debug.SetGCPercent(prev) })
	}
	limit := cfg.memoryLimit
	if limit < 0 {
		limit = int64(float64(containerMemoryLimit()) * memoryLimitShare)
	}
	if v := os.Getenv("GOMEMLIMIT"); v != "" {
		log.Info("go runtime: GOMEMLIMIT is set; memory-limit is not applied", "GOMEMLIMIT", v)
	} else if limit > 0 {
		prev := debug.SetMemoryLimit(limit)
		undo = append(undo, func() { debug.SetMemoryLimit(prev) })
	}
	log.Debug("go runtime", "gc_percent", cfg.GCPercent, "memory_limit_bytes", limit)
	return func() {
		for _, f := range undo {
			f()
		}
	}
}
