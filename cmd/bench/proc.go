package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// procCPU samples the CPU time of named processes from /proc, as the Kannel peer's run.sh does for
// its daemons: each process's user+system ticks (all threads), and the machine's busy ticks, so
// that what nobody named used is "other".
type procCPU struct {
	// pids maps a role ("server", "load", "sink") to its process.
	pids map[string]int
	// pgDatabase, when set, adds the PostgreSQL processes that work for that database: its
	// backends and autovacuum workers, and the server's shared processes (postmaster, WAL writer,
	// checkpointer, background writer, launchers). Backends of other databases are left out.
	pgDatabase string

	// last holds, while watch runs, each process's ticks when it was last seen: a process that
	// ends between two samples (an autovacuum worker, a backend the pool closed) keeps what it
	// had used by the last sample that saw it, instead of vanishing from the sum.
	mu   sync.Mutex
	last map[int]uint64
	role map[int]string
	// ours and skip remember, for the run, which processes are PostgreSQL's for pgDatabase and
	// which are not, so that a sample reads each process's command line once.
	ours map[int]bool
	skip map[int]bool
	// kind is what each of PostgreSQL's processes does (pgKind).
	kind map[int]string
}

// watch samples every interval until ctx ends, so that sample can count processes that have
// ended since. Without it, a process that ends before a window's last sample is lost.
func (p *procCPU) watch(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		p.sample()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// cpuSnapshot is one sample: ticks per process, the role of each, and the machine's busy ticks.
type cpuSnapshot struct {
	at    time.Time
	ticks map[int]uint64
	role  map[int]string
	busy  uint64
}

func (p *procCPU) sample() cpuSnapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		p.last, p.role, p.ours, p.skip, p.kind = map[int]uint64{}, map[int]string{}, map[int]bool{}, map[int]bool{}, map[int]string{}
	}
	s := p.read()
	for pid, t := range s.ticks {
		p.last[pid], p.role[pid] = max(t, p.last[pid]), s.role[pid]
	}
	for pid, t := range p.last {
		if _, alive := s.ticks[pid]; !alive {
			s.ticks[pid], s.role[pid] = t, p.role[pid]
		}
	}
	return s
}

// read is one sample of the processes running now; the caller holds mu.
func (p *procCPU) read() cpuSnapshot {
	s := cpuSnapshot{at: time.Now(), ticks: map[int]uint64{}, role: map[int]string{}}
	s.busy = machineBusyTicks()
	for role, pid := range p.pids {
		if t, _ := procTicks(fmt.Sprintf("/proc/%d/stat", pid)); t > 0 {
			s.ticks[pid], s.role[pid] = t, role
		}
	}
	if p.pgDatabase == "" {
		return s
	}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || p.skip[pid] {
			continue
		}
		dir := filepath.Join("/proc", d.Name())
		t, comm := procTicks(filepath.Join(dir, "stat"))
		if comm == "" {
			continue
		}
		if comm != "postgres" {
			p.skip[pid] = true
			continue
		}
		ours, known := p.ours[pid]
		if !known {
			cmd, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
			line := string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
			ours = pgProcessOf(line, p.pgDatabase)
			// A backend just forked still shows the postmaster's command line: decide once it
			// has its own.
			if k := pgKind(line); k != "" {
				p.ours[pid], p.kind[pid] = ours, k
			}
		}
		if ours {
			s.ticks[pid], s.role[pid] = t, "postgres/"+cmp.Or(p.kind[pid], "backend")
		} else {
			p.skip[pid] = true
		}
	}
	return s
}

// pgProcessOf reports whether a PostgreSQL process, by its command line, works for database db:
// a backend or autovacuum worker of db, or one of the server's shared processes.
func pgProcessOf(cmdline, db string) bool {
	if strings.Contains(cmdline, " "+db+" ") || strings.HasSuffix(strings.TrimSpace(cmdline), " "+db) {
		return true
	}
	// Client backends show "user db host(port) state"; autovacuum workers name their database.
	return !strings.Contains(cmdline, "(") && !strings.Contains(cmdline, "[local]") && !strings.Contains(cmdline, "autovacuum worker")
}

// pgKind names what a PostgreSQL process does from its command line ("postgres: 15/main:
// walwriter"): "backend" for a client's backend, "autovacuum" for a worker, the process's own
// name for the server's shared processes, "" while a new process still shows the postmaster's.
func pgKind(cmdline string) string {
	rest, ok := strings.CutPrefix(cmdline, "postgres: ")
	if !ok {
		return ""
	}
	if before, after, found := strings.Cut(rest, ": "); found && !strings.Contains(before, " ") {
		rest = after // the cluster's name, as Debian's clusters show it
	}
	switch {
	case strings.HasPrefix(rest, "autovacuum worker"):
		return "autovacuum"
	case strings.Contains(rest, "("), strings.Contains(rest, "[local]"):
		return "backend"
	}
	if i := strings.Index(rest, "  "); i >= 0 {
		rest = rest[:i] // the padding of an overwritten argv
	}
	return strings.TrimSpace(rest)
}

// cpuSeconds is what each role used between two samples, in CPU seconds, with "other" the rest
// of the machine's busy time and "wall" the seconds between the samples. A process that started
// after a counts from zero; one that ended before b counts what it had used when last sampled
// (watch samples often enough for that to be nearly all of it).
func cpuSeconds(a, b cpuSnapshot) map[string]float64 {
	hz := 100.0 // USER_HZ on Linux
	out := map[string]float64{}
	var named uint64
	for pid, t := range b.ticks {
		d := t - min(t, a.ticks[pid])
		out[b.role[pid]] += float64(d) / hz
		if kind, ok := strings.CutPrefix(b.role[pid], "postgres/"); ok && kind != "" {
			out["postgres"] += float64(d) / hz
		}
		named += d
	}
	busy := sub(b.busy, a.busy)
	out["other"] = max(0, float64(busy)-float64(named)) / hz
	out["wall"] = b.at.Sub(a.at).Seconds()
	return out
}

// machineBusyTicks is the machine's busy time (all cores) from /proc/stat.
func machineBusyTicks() uint64 {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var v [8]uint64
	for i := range v {
		v[i], _ = strconv.ParseUint(f[i+1], 10, 64)
	}
	return v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
}

// machineTicks is the machine's busy and total time (all cores) from /proc/stat.
func machineTicks() (busy, total uint64) {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0
	}
	for i := 1; i <= 8; i++ {
		v, _ := strconv.ParseUint(f[i], 10, 64)
		total += v
		if i != 4 && i != 5 { // idle, iowait
			busy += v
		}
	}
	return busy, total
}

// waitQuiet waits, as the Kannel peer's run.sh does before each run, until the machine's other
// work uses at most maxBusy percent of all cores over a 2 s sample, for at most wait; it returns
// the last sample's percentage and whether it was quiet.
func waitQuiet(maxBusy int, wait time.Duration, progress func(string, ...any)) (int, bool) {
	deadline := time.Now().Add(wait)
	for {
		b1, t1 := machineTicks()
		time.Sleep(2 * time.Second)
		b2, t2 := machineTicks()
		busy := int(100 * sub(b2, b1) / (sub(t2, t1) + 1))
		if busy <= maxBusy {
			return busy, true
		}
		if time.Now().After(deadline) {
			progress("WARNING: the machine is still %d%% busy with other work; running anyway", busy)
			return busy, false
		}
		progress("the machine is %d%% busy with other processes; waiting", busy)
		time.Sleep(8 * time.Second)
	}
}

// selfCPUSeconds is this process's user+system time.
func selfCPUSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// pgKindsLine lists PostgreSQL's CPU seconds by kind of process (pgKind), the largest first.
func pgKindsLine(c map[string]float64) string {
	type kv struct {
		k string
		v float64
	}
	var kinds []kv
	for role, v := range c {
		if k, ok := strings.CutPrefix(role, "postgres/"); ok {
			kinds = append(kinds, kv{k, v})
		}
	}
	slices.SortFunc(kinds, func(a, b kv) int { return cmp.Compare(b.v, a.v) })
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %.2f", k.k, k.v)
	}
	return strings.Join(parts, ", ")
}
