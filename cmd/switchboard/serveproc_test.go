package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

// serveProcess is the real `switchboard serve` binary as a child process on a PostgreSQL database
// of its own: what the crash tests kill and start again.
type serveProcess struct {
	// st is the process's database, opened by the test too.
	st *store.Store
	// addr is the TLS listener's host:port.
	addr                string
	bin, dataDir, dbURL string
	// args are extra serve flags.
	args []string
}

// newServeProcess builds the binary and creates its database (dropped at cleanup); it skips the
// spec when SWITCHBOARD_TEST_DATABASE_URL does not point at PostgreSQL. Call it in a BeforeAll.
func newServeProcess(ctx context.Context, what string, args ...string) *serveProcess {
	admin := os.Getenv(store.TestDatabaseEnv)
	if admin == "" {
		Skip(what + " needs PostgreSQL: set " + store.TestDatabaseEnv + " (make test does)")
	}
	p := buildServeProcess(args)
	adm, err := store.Open(ctx, store.Config{URL: admin, MaxOpenConns: 1})
	Expect(err).NotTo(HaveOccurred())
	name := "sbcrash_" + strings.ToLower(rand.Text()[:10])
	Expect(adm.DB().Exec("CREATE DATABASE " + name).Error).To(Succeed())
	DeferCleanup(func() {
		_ = adm.DB().Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)").Error
		_ = adm.Close()
	})
	u, err := url.Parse(admin)
	Expect(err).NotTo(HaveOccurred())
	u.Path = "/" + name
	p.dbURL = u.String()
	p.openDatabase(ctx)
	return p
}

// newTestServeProcess is newServeProcess on the suite's database kind: PostgreSQL when
// SWITCHBOARD_TEST_DATABASE_URL is set, otherwise a SQLite file in the process's data directory
// (shared with the test, which opens it too; one instance only).
func newTestServeProcess(ctx context.Context, what string, args ...string) *serveProcess {
	if os.Getenv(store.TestDatabaseEnv) != "" {
		return newServeProcess(ctx, what, args...)
	}
	p := buildServeProcess(args)
	p.dbURL = filepath.Join(p.dataDir, "switchboard.db")
	p.openDatabase(ctx)
	return p
}

// buildServeProcess builds the binary into a fresh data directory and picks a free port.
func buildServeProcess(args []string) *serveProcess {
	p := &serveProcess{dataDir: GinkgoT().TempDir(), args: args}
	p.bin = filepath.Join(p.dataDir, "switchboard")
	out, err := exec.Command("go", "build", "-o", p.bin, ".").CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	p.addr = ln.Addr().String()
	Expect(ln.Close()).To(Succeed())
	return p
}

// openDatabase opens and migrates the process's database for the test.
func (p *serveProcess) openDatabase(ctx context.Context) {
	var err error
	p.st, err = store.Open(ctx, store.Config{URL: p.dbURL})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(p.st.Close)
	_, err = p.st.Migrate(ctx)
	Expect(err).NotTo(HaveOccurred())
}

// sibling is another instance of the same installation: the same binary and database, its own
// listener and data directory (several stateless instances on one PostgreSQL).
func (p *serveProcess) sibling() *serveProcess {
	q := *p
	q.dataDir = GinkgoT().TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	q.addr = ln.Addr().String()
	Expect(ln.Close()).To(Succeed())
	return &q
}

// start runs `switchboard serve` and waits until it answers; cleanup stops it if it still runs.
func (p *serveProcess) start() *exec.Cmd {
	args := append([]string{"serve", "--database-url", p.dbURL, "--data-dir", p.dataDir, "--listen", p.addr,
		"--log-level", "warn", "--job-rescue-after", "3s", "--sim-latency", "20ms", "--rate-limit", "0"}, p.args...)
	cmd := exec.Command(p.bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = GinkgoWriter, &logs
	Expect(cmd.Start()).To(Succeed())
	DeferCleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_, _ = cmd.Process.Wait()
		}
		GinkgoWriter.Printf("serve logs:\n%s\n", logs.String())
	})
	Eventually(func() error {
		resp, err := insecureClient.Get("https://" + p.addr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}).WithTimeout(20 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
	return cmd
}

// count runs a counting query on the process's database.
func (p *serveProcess) count(q string, args ...any) int64 {
	var n int64
	ExpectWithOffset(1, p.st.DB().Raw(q, args...).Scan(&n).Error).To(Succeed())
	return n
}

// sendableAccount creates a project with a live key and an account whose local number is attached
// to an active campaign, so it can send at once; it returns the key and the account id.
func (p *serveProcess) sendableAccount(ctx context.Context, number string) (key, accountID string) {
	prj, err := p.st.CreateProject(ctx, "crash")
	Expect(err).NotTo(HaveOccurred())
	_, key, err = p.st.CreateAPIKey(ctx, prj.ID, false)
	Expect(err).NotTo(HaveOccurred())
	acct := &store.Account{ProjectID: prj.ID, Name: "Crash"}
	Expect(p.st.CreateAccount(ctx, acct)).To(Succeed())
	now := time.Now().UTC()
	cid, nid := store.NewID(store.PrefixCampaign), store.NewID(store.PrefixPhoneNumber)
	Expect(p.st.DB().Exec(`INSERT INTO campaigns (id, project_id, account_id, carrier, status, params, created_at, updated_at)
		VALUES (?, ?, ?, 'sim', 'active', '{}', ?, ?)`, cid, prj.ID, acct.ID, now, now).Error).To(Succeed())
	Expect(p.st.DB().Exec(`INSERT INTO phone_numbers (id, project_id, account_id, number, type, country, metadata, carrier,
		campaign_id, attachment_status, created_at, updated_at) VALUES (?, ?, ?, ?, 'local', 'US', '{}', 'sim', ?, 'attached', ?, ?)`,
		nid, prj.ID, acct.ID, number, cid, now, now).Error).To(Succeed())
	return key, acct.ID
}

// sendConcurrently has 16 clients send total messages to recipients distinct numbers, client k
// through the instance at addrs[k % len(addrs)], and returns how many sends were not answered 201.
func sendConcurrently(addrs []string, key, accountID string, total, recipients int, label string) int64 {
	var next, refused atomic.Int64
	var wg sync.WaitGroup
	for k := range 16 {
		addr := addrs[k%len(addrs)]
		wg.Go(func() {
			defer GinkgoRecover()
			for {
				i := next.Add(1)
				if i > int64(total) {
					return
				}
				body := fmt.Sprintf(`{"to":"+1646%07d","body":"%s %d"}`, i%int64(recipients), label, i)
				req, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/accounts/"+accountID+"/messages", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				resp, err := insecureClient.Do(req)
				if err != nil {
					refused.Add(1)
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					GinkgoWriter.Printf("send %d: %d %s\n", i, resp.StatusCode, b)
					refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return refused.Load()
}
