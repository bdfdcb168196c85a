package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// KannelRun is one run of the Kannel peer's run.sh in DLR mode (one row of its results.tsv).
type KannelRun struct {
	AcceptedPS float64
	P50ms      float64
	P99ms      float64
	Accepted   int64
	Non202     int64
	Errors     int64
	// DLRReceived is the callbacks counted at its sink; DLRRate their rate from the first to the
	// last, the figure the e2e ratio divides by.
	DLRReceived int64
	DLRRate     float64
	// CPU seconds over the load window, as run.sh reads them from /proc.
	CPUBearerbox, CPUSmsbox, CPUFakesmsc, CPUSink, CPUGen, CPUOther float64
	BusyBefore                                                      float64
}

// CPUPerMessageMs is Kannel's CPU (bearerbox + smsbox) per delivery-report callback, in ms.
func (k KannelRun) CPUPerMessageMs() float64 {
	if k.DLRReceived == 0 {
		return 0
	}
	return 1000 * (k.CPUBearerbox + k.CPUSmsbox) / float64(k.DLRReceived)
}

// findKannel returns the Kannel peer's run.sh: the -kannel flag, else ../shared/peers/kannel/run.sh
// beside this checkout or beside the repository's main worktree; "" when there is none.
func findKannel(flagValue string) string {
	if flagValue == "none" {
		return ""
	}
	if flagValue != "" {
		return flagValue
	}
	var roots []string
	if out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output(); err == nil {
		roots = append(roots, strings.TrimSpace(string(out)))
	}
	if out, err := exec.Command("git", "rev-parse", "--path-format=absolute", "--git-common-dir").Output(); err == nil {
		roots = append(roots, filepath.Dir(strings.TrimSpace(string(out))))
	}
	for _, r := range roots {
		p := filepath.Join(r, "..", "shared", "peers", "kannel", "run.sh")
		if _, err := os.Stat(p); err == nil {
			return filepath.Clean(p)
		}
	}
	return ""
}

// runKannel runs run.sh once: DLR mode, concurrency c, dur seconds, one repetition, no wrk
// cross-check, in its own output directory. run.sh installs Kannel from Debian's packages when it
// is missing, waits for a quiet machine, and stops only what it started.
func runKannel(ctx context.Context, script string, c int, dur time.Duration, logTo *os.File) (*KannelRun, error) {
	out, err := os.MkdirTemp("", "kannel-e2e-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(out)
	cmd := exec.CommandContext(ctx, "bash", script)
	cmd.Env = append(os.Environ(), "MODES=dlr", "CONCS="+strconv.Itoa(c), "REPS=1", "WRK=0",
		"DUR="+strconv.Itoa(int(dur.Seconds())), "OUTDIR="+out)
	cmd.Stdout, cmd.Stderr = logTo, logTo
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kannel run.sh: %w", err)
	}
	f, err := os.Open(filepath.Join(out, "results.tsv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var head []string
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if head == nil {
			head = fields
			continue
		}
		if len(fields) != len(head) || fields[0] != "dlr" {
			continue
		}
		v := map[string]float64{}
		for i, h := range head {
			v[h], _ = strconv.ParseFloat(fields[i], 64)
		}
		return &KannelRun{AcceptedPS: v["accepted_per_s"], P50ms: v["p50_ms"], P99ms: v["p99_ms"],
			Accepted: int64(v["accepted"]), Non202: int64(v["non202"]), Errors: int64(v["errors"]),
			DLRReceived: int64(v["dlr_received"]), DLRRate: v["dlr_rate"],
			CPUBearerbox: v["cpu_bearerbox"], CPUSmsbox: v["cpu_smsbox"], CPUFakesmsc: v["cpu_fakesmsc"],
			CPUSink: v["cpu_sink"], CPUGen: v["cpu_gen"], CPUOther: v["cpu_other"], BusyBefore: v["busy_before_pct"]}, nil
	}
	return nil, errors.New("kannel run.sh: no dlr row in results.tsv")
}
