package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

// The blast crash test: the real binary serving on PostgreSQL is killed with SIGKILL while it fans
// out a blast of 20,000 recipients, then started again. Every recipient must get exactly one
// message, as the simulated carrier's outbox (the handsets' view) shows.
var _ = Describe("A crash during a blast's fan-out", Ordered, func() {
	const total = 20000
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
			Skip("the blast crash test needs PostgreSQL: set " + store.TestDatabaseEnv + " (make test does)")
		}
		dataDir = GinkgoT().TempDir()
		bin = filepath.Join(dataDir, "switchboard")
		out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))

		adm, err := store.Open(ctx, store.Config{URL: admin, MaxOpenConns: 1})
		Expect(err).NotTo(HaveOccurred())
		name := "sbblast_" + strings.ToLower(rand.Text()[:10])
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

	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "serve", "--database-url", dbURL, "--data-dir", dataDir, "--listen", addr,
			"--log-level", "warn", "--job-rescue-after", "3s", "--sim-latency", "20ms", "--pace-local", "100000", "--rate-limit", "0")
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

	It("neither skips nor repeats a recipient", func(ctx context.Context) {
		p, err := st.CreateProject(ctx, "blast crash")
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
			campaign_id, attachment_status, created_at, updated_at) VALUES (?, ?, ?, '+19995550901', 'local', 'US', '{}', 'sim', ?, 'attached', ?, ?)`,
			nid, p.ID, acct.ID, cid, now, now).Error).To(Succeed())

		serve := start()
		to := make([]string, total)
		for i := range to {
			to[i] = fmt.Sprintf("+1646%07d", i)
		}
		body, err := json.Marshal(map[string]any{"body": "Blast crash test", "to": to})
		Expect(err).NotTo(HaveOccurred())
		req, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/accounts/"+acct.ID+"/blasts", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		began := time.Now()
		resp, err := insecureClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusCreated), string(b))
		var blast struct {
			ID string `json:"id"`
		}
		Expect(json.Unmarshal(b, &blast)).To(Succeed())
		GinkgoWriter.Printf("blast of %d accepted in %s\n", total, time.Since(began))

		By("killing the server with SIGKILL during the fan-out")
		Eventually(func() int64 { return count(`SELECT fanned_out FROM blasts WHERE id = ?`, blast.ID) }).
			WithTimeout(30 * time.Second).WithPolling(5 * time.Millisecond).Should(BeNumerically(">", 0))
		Expect(serve.Process.Kill()).To(Succeed())
		_, _ = serve.Process.Wait()
		fanned := count(`SELECT fanned_out FROM blasts WHERE id = ?`, blast.ID)
		atKill := count(`SELECT COUNT(*) FROM sim_outbox`)
		GinkgoWriter.Printf("killed after %s: %d of %d recipients fanned out, %d in the outbox\n", time.Since(began), fanned, total, atKill)
		Expect(fanned).To(BeNumerically("<", total), "the kill came mid-fan-out")

		By("starting it again")
		start()
		Eventually(func() int64 {
			return count(`SELECT COUNT(*) FROM messages WHERE blast_id = ? AND status = 'delivered'`, blast.ID)
		}).WithTimeout(120 * time.Second).WithPolling(250 * time.Millisecond).Should(BeEquivalentTo(total))
		GinkgoWriter.Printf("all delivered %s after the blast was accepted\n", time.Since(began))

		Expect(count(`SELECT fanned_out FROM blasts WHERE id = ?`, blast.ID)).To(BeEquivalentTo(total))
		Expect(count(`SELECT COUNT(*) FROM blast_recipients WHERE blast_id = ?`, blast.ID)).To(BeEquivalentTo(total))
		Expect(count(`SELECT COUNT(*) FROM messages WHERE blast_id = ?`, blast.ID)).To(BeEquivalentTo(total))
		Expect(count(`SELECT COUNT(*) FROM sim_outbox`)).To(BeEquivalentTo(total))
		Expect(count(`SELECT COUNT(DISTINCT to_number) FROM sim_outbox`)).To(BeEquivalentTo(total), "each recipient got exactly one message")
		Expect(count(`SELECT COUNT(*) FROM messages m WHERE blast_id = ? AND (SELECT COUNT(*) FROM sim_outbox o WHERE o.reference = m.id) <> 1`, blast.ID)).
			To(BeZero(), "the carrier received every message exactly once")
	})
})
