package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
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

// The crash test: the real binary serving on PostgreSQL is killed with SIGKILL while it dispatches
// 2,000 accepted messages, then started again. Every message must end delivered, and the
// simulated carrier must have received each exactly once.
var _ = Describe("A crash while dispatching", Ordered, func() {
	const total = 2000
	var (
		dbURL   string
		st      *store.Store
		bin     string
		dataDir string
		addr    string
	)

	BeforeAll(func(ctx context.Context) {
		admin := os.Getenv(store.TestDatabaseEnv)
		if admin == "" {
			Skip("the crash test needs PostgreSQL: set " + store.TestDatabaseEnv + " (make test does)")
		}
		dataDir = GinkgoT().TempDir()
		bin = filepath.Join(dataDir, "switchboard")
		build := exec.Command("go", "build", "-o", bin, ".")
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))

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
		dbURL = u.String()
		st, err = store.Open(ctx, store.Config{URL: dbURL})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(st.Close)
		_, err = st.Migrate(ctx)
		Expect(err).NotTo(HaveOccurred())

		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		addr = ln.Addr().String()
		Expect(ln.Close()).To(Succeed())
	})

	// start runs `switchboard serve` as a child process and waits until it answers.
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "serve", "--database-url", dbURL, "--data-dir", dataDir, "--listen", addr,
			"--log-level", "warn", "--job-rescue-after", "3s", "--sim-latency", "20ms", "--pace-local", "250", "--rate-limit", "0")
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
			resp, err := insecureClient.Get("https://" + addr + "/healthz")
			if err == nil {
				resp.Body.Close()
			}
			return err
		}).WithTimeout(20 * time.Second).WithPolling(100 * time.Millisecond).Should(Succeed())
		return cmd
	}

	count := func(q string, args ...any) int64 {
		var n int64
		ExpectWithOffset(1, st.DB().Raw(q, args...).Scan(&n).Error).To(Succeed())
		return n
	}

	It("loses no message and sends none twice", func(ctx context.Context) {
		p, err := st.CreateProject(ctx, "crash")
		Expect(err).NotTo(HaveOccurred())
		_, key, err := st.CreateAPIKey(ctx, p.ID, false)
		Expect(err).NotTo(HaveOccurred())
		acct := &store.Account{ProjectID: p.ID, Name: "Crash"}
		Expect(st.CreateAccount(ctx, acct)).To(Succeed())
		now := time.Now().UTC()
		cid, nid := store.NewID(store.PrefixCampaign), store.NewID(store.PrefixPhoneNumber)
		Expect(st.DB().Exec(`INSERT INTO campaigns (id, project_id, account_id, carrier, status, params, created_at, updated_at)
			VALUES (?, ?, ?, 'sim', 'active', '{}', ?, ?)`, cid, p.ID, acct.ID, now, now).Error).To(Succeed())
		Expect(st.DB().Exec(`INSERT INTO phone_numbers (id, project_id, account_id, number, type, country, metadata, carrier,
			campaign_id, attachment_status, created_at, updated_at) VALUES (?, ?, ?, '+19995550900', 'local', 'US', '{}', 'sim', ?, 'attached', ?, ?)`,
			nid, p.ID, acct.ID, cid, now, now).Error).To(Succeed())

		serve := start()
		began := time.Now()
		By("sending 2,000 messages")
		var next, refused atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer GinkgoRecover()
				for {
					i := next.Add(1)
					if i > total {
						return
					}
					body := fmt.Sprintf(`{"to":"+1646%07d","body":"crash test %d"}`, i%500, i)
					req, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/accounts/"+acct.ID+"/messages", strings.NewReader(body))
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
			}()
		}
		wg.Wait()
		Expect(refused.Load()).To(BeZero())
		Expect(count(`SELECT COUNT(*) FROM messages`)).To(BeEquivalentTo(total))

		By("killing the server with SIGKILL while it dispatches")
		Eventually(func() int64 { return count(`SELECT COUNT(*) FROM sim_outbox`) }).WithTimeout(20 * time.Second).
			WithPolling(20 * time.Millisecond).Should(BeNumerically(">=", 300))
		Expect(serve.Process.Kill()).To(Succeed())
		_, _ = serve.Process.Wait()
		atKill := count(`SELECT COUNT(*) FROM sim_outbox`)
		delivered := count(`SELECT COUNT(*) FROM messages WHERE status = 'delivered'`)
		GinkgoWriter.Printf("killed after %s: %d in the outbox, %d delivered\n", time.Since(began), atKill, delivered)
		Expect(atKill).To(BeNumerically("<", total), "the kill came mid-dispatch")

		By("starting it again")
		start()
		Eventually(func() int64 { return count(`SELECT COUNT(*) FROM messages WHERE status = 'delivered'`) }).
			WithTimeout(50 * time.Second).WithPolling(250 * time.Millisecond).Should(BeEquivalentTo(total))
		GinkgoWriter.Printf("all delivered %s after the first send\n", time.Since(began))

		Expect(count(`SELECT COUNT(*) FROM sim_outbox`)).To(BeEquivalentTo(total))
		Expect(count(`SELECT COUNT(*) FROM messages m WHERE (SELECT COUNT(*) FROM sim_outbox o WHERE o.reference = m.id) <> 1`)).
			To(BeZero(), "the carrier received every message exactly once")
		Expect(count(`SELECT COUNT(*) FROM events WHERE type = 'message.delivered'`)).To(BeEquivalentTo(total))
	})
})

// insecureClient talks to the child's self-signed TLS listener.
var insecureClient = &http.Client{
	Timeout:   10 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, MaxIdleConnsPerHost: 32}, //nolint:gosec // a test's own server
}
