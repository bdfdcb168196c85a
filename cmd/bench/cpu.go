package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CPUShare says where the machine's CPU went during a measured window, in percent of one core
// (200% = both cores of a 2-core machine): this process (server and load generator), PostgreSQL's
// processes, and everything else. "Other" above a few percent means something else ran on the
// machine and the figures are low. Linux only (read from /proc); elsewhere the split is unknown.
type CPUShare struct {
	Bench    float64 `json:"bench"`
	Postgres float64 `json:"postgres"`
	Other    float64 `json:"other"`
	Idle     float64 `json:"idle"`
}

type cpuSample struct {
	at                         time.Time
	busy, idle, self, postgres uint64
	ok                         bool
}

func sampleCPU() cpuSample {
	s := cpuSample{at: time.Now()}
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s
	}
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return s
	}
	var v [8]uint64
	for i := range v {
		v[i], _ = strconv.ParseUint(f[i+1], 10, 64)
	}
	// user nice system idle iowait irq softirq steal
	s.busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
	s.idle = v[3] + v[4]
	s.self, _ = procTicks("/proc/self/stat")
	matches, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, m := range matches {
		if t, comm := procTicks(m); comm == "postgres" {
			s.postgres += t
		}
	}
	s.ok = true
	return s
}

// procTicks returns a process's user+system clock ticks and its command name.
func procTicks(path string) (uint64, string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, ""
	}
	open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || close < open {
		return 0, ""
	}
	comm := string(b[open+1 : close])
	f := strings.Fields(string(b[close+1:]))
	// After the command: state(3) ppid(4) ... utime(14) stime(15), counted from field 3 at f[0].
	if len(f) < 13 {
		return 0, comm
	}
	ut, _ := strconv.ParseUint(f[11], 10, 64)
	st, _ := strconv.ParseUint(f[12], 10, 64)
	return ut + st, comm
}

// cpuWindow samples the machine's CPU at from and at to, and sends the split between the two.
func cpuWindow(from, to time.Time) <-chan *CPUShare {
	done := make(chan *CPUShare, 1)
	go func() {
		time.Sleep(time.Until(from))
		a := sampleCPU()
		time.Sleep(time.Until(to))
		done <- cpuBetween(a, sampleCPU())
	}()
	return done
}

// cpuBetween splits the CPU used between two samples. Ticks are USER_HZ (100/s on Linux).
func cpuBetween(a, b cpuSample) *CPUShare {
	if !a.ok || !b.ok {
		return nil
	}
	secs := b.at.Sub(a.at).Seconds()
	if secs <= 0 {
		return nil
	}
	pct := func(ticks uint64) float64 { return round(float64(ticks)/secs, 1) } // ticks/s at 100 Hz = percent
	busy, self, pg := sub(b.busy, a.busy), sub(b.self, a.self), sub(b.postgres, a.postgres)
	return &CPUShare{
		Bench:    pct(self),
		Postgres: pct(pg),
		Other:    max(0, round(pct(busy)-pct(self)-pct(pg), 1)),
		Idle:     pct(sub(b.idle, a.idle)),
	}
}

func sub(x, y uint64) uint64 {
	if x < y {
		return 0
	}
	return x - y
}
