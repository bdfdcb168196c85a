package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Idempotency keys under faults (issue 16, item 16): the real binary is killed with SIGKILL, or
// loses its database connections, in the middle of sends that carry an Idempotency-Key, and a retry
// with the same key must resolve to exactly one message within a few seconds: the one the first
// request committed, or a fresh one when it committed nothing.

// keyedAnswer is the API's answer to a keyed send (status 0: no answer, the connection failed).
type keyedAnswer struct {
	Status   int
	ID       string
	Replayed bool
	ErrType  string
}

// keyedSend posts a send of body with an Idempotency-Key to the instance at addr.
func keyedSend(addr, key, accountID, body string) keyedAnswer {
	req, _ := http.NewRequest(http.MethodPost, "https://"+addr+"/accounts/"+accountID+"/messages", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+keyOf(accountID))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := insecureClient.Do(req)
	if err != nil {
		return keyedAnswer{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		ID    string `json:"id"`
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	_ = json.Unmarshal(b, &out)
	return keyedAnswer{Status: resp.StatusCode, ID: out.ID, Replayed: resp.Header.Get("Idempotent-Replayed") == "true", ErrType: out.Error.Type}
}

// apiKeys remembers each account's API key for keyedSend.
var apiKeys sync.Map

func keyOf(accountID string) string {
	k, _ := apiKeys.Load(accountID)
	s, _ := k.(string)
	return s
}

// resolve retries a keyed send until it is answered 201, as a client does after 409s and lost
// connections, and returns the answer.
func resolve(addrs []string, key, accountID, body string) keyedAnswer {
	var last keyedAnswer
	EventuallyWithOffset(1, func() int {
		last = keyedSend(addrs[0], key, accountID, body)
		addrs = append(addrs[1:], addrs[0])
		return last.Status
	}).WithTimeout(30*time.Second).WithPolling(200*time.Millisecond).Should(Equal(http.StatusCreated), "key %s", key)
	return last
}

var _ = Describe("Idempotency keys when an instance dies", Ordered, func() {
	var (
		a, b *serveProcess
		acct string
	)
	BeforeAll(func(ctx context.Context) {
		a = newServeProcess(ctx, "the idempotency crash test", "--pace-local", "0")
		b = a.sibling()
		var key string
		key, acct = a.sendableAccount(ctx, "+19995550902")
		apiKeys.Store(acct, key)
	})

	// messagesWith counts the messages whose body is body.
	messagesWith := func(body string) int64 {
		return a.count(`SELECT COUNT(*) FROM messages WHERE body = ?`, body)
	}
	// waitingOn waits until a statement of another session whose text is like query (an ILIKE
	// pattern) waits for a lock of this kind (a table's or an advisory lock). The text matters:
	// the instances' own workers wait on the same locks (a dispatch claim, which updates
	// messages, waits behind lockMessages as the send does).
	waitingOn := func(locktype, query string) {
		Eventually(func() int64 {
			return a.count(`SELECT COUNT(*) FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
				WHERE NOT l.granted AND l.locktype = ? AND s.query ILIKE ?
				AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`, locktype, query)
		}).WithTimeout(10 * time.Second).WithPolling(20 * time.Millisecond).Should(BeNumerically(">=", 1))
	}
	// insertingMessage is the text of the keyed send's insert into messages (gorm's).
	const insertingMessage = `%INSERT INTO "messages"%`
	// lockMessages holds, until the returned function, a lock that makes every insert into
	// messages wait (reads go on): a send is held between its claim and its commit.
	lockMessages := func() (release func(), pid int64) {
		tx := a.st.DB().Begin()
		Expect(tx.Exec(`LOCK TABLE messages IN EXCLUSIVE MODE`).Error).To(Succeed())
		Expect(tx.Raw(`SELECT pg_backend_pid()`).Scan(&pid).Error).To(Succeed())
		return func() { Expect(tx.Rollback().Error).To(Succeed()) }, pid
	}
	kill := func(cmd *exec.Cmd) {
		Expect(cmd.Process.Kill()).To(Succeed())
		_, _ = cmd.Process.Wait()
	}

	It("a send killed between its claim and its commit: the retry runs afresh once the lease is over, and the dead request writes nothing", func() {
		serveA := a.start()
		b.start()
		body := `{"to":"+16465550101","body":"killed before the commit"}`
		unlock, _ := lockMessages()
		first := make(chan keyedAnswer, 1)
		go func() { first <- keyedSend(a.addr, "before-commit", acct, body) }()
		waitingOn("relation", insertingMessage)
		Expect(a.count(`SELECT COUNT(*) FROM idempotency_keys WHERE key = 'before-commit' AND status = 0`)).To(BeEquivalentTo(1))
		Expect(keyedSend(b.addr, "before-commit", acct, body)).To(HaveField("ErrType", "idempotency_key_in_use"),
			"the first request is alive: its claim holds")

		By("killing the instance that serves it")
		kill(serveA)
		Expect((<-first).Status).To(BeZero(), "the client got no answer")
		var token string
		Expect(a.st.DB().Raw(`SELECT token FROM idempotency_keys WHERE key = 'before-commit'`).Scan(&token).Error).To(Succeed())
		killed := time.Now()
		retry := make(chan keyedAnswer, 1)
		go func() {
			defer GinkgoRecover()
			retry <- resolve([]string{b.addr}, "before-commit", acct, body)
		}()
		// The retry takes the key over once the lease is over, and waits on the lock as well,
		// behind the dead request's insert, which PostgreSQL still holds (it has not noticed its
		// client is gone).
		Eventually(func() string {
			var now string
			Expect(a.st.DB().Raw(`SELECT token FROM idempotency_keys WHERE key = 'before-commit'`).Scan(&now).Error).To(Succeed())
			return now
		}).WithTimeout(20 * time.Second).WithPolling(50 * time.Millisecond).ShouldNot(Equal(token))
		unlock()
		var got keyedAnswer
		Eventually(retry).WithTimeout(30 * time.Second).Should(Receive(&got))
		GinkgoWriter.Printf("the retry resolved %s after the kill\n", time.Since(killed))
		Expect(got.Replayed).To(BeFalse())
		Expect(messagesWith("killed before the commit")).To(BeEquivalentTo(1), "one message, the retry's")
		Expect(a.count(`SELECT COUNT(*) FROM messages WHERE id = ?`, got.ID)).To(BeEquivalentTo(1))
		Expect(keyedSend(b.addr, "before-commit", acct, body)).To(SatisfyAll(HaveField("ID", got.ID), HaveField("Replayed", true)))
		Eventually(func() int64 {
			return a.count(`SELECT COUNT(*) FROM messages WHERE id = ? AND status = 'delivered'`, got.ID)
		}).
			WithTimeout(20 * time.Second).Should(BeEquivalentTo(1))
	})

	It("a send killed after its commit, before its response was recorded: the retry answers with the committed message", func() {
		serveA := a.start()
		b.start()
		body := `{"to":"+16465550102","body":"killed after the commit"}`
		// The record of the response waits for an advisory lock the test holds.
		conn, err := a.st.DB().DB()
		Expect(err).NotTo(HaveOccurred())
		hold, err := conn.Conn(context.Background())
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(hold.Close)
		_, err = hold.ExecContext(context.Background(), `SELECT pg_advisory_lock(4216)`)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.st.DB().Exec(`CREATE FUNCTION hold_completion() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN PERFORM pg_advisory_xact_lock(4216); RETURN NEW; END $$`).Error).To(Succeed())
		Expect(a.st.DB().Exec(`CREATE TRIGGER hold_completion BEFORE UPDATE ON idempotency_keys FOR EACH ROW
			WHEN (OLD.status = 0 AND NEW.status <> 0) EXECUTE FUNCTION hold_completion()`).Error).To(Succeed())
		DeferCleanup(func() {
			_ = a.st.DB().Exec(`DROP TRIGGER IF EXISTS hold_completion ON idempotency_keys`).Error
			_ = a.st.DB().Exec(`DROP FUNCTION IF EXISTS hold_completion()`).Error
		})

		first := make(chan keyedAnswer, 1)
		go func() { first <- keyedSend(a.addr, "after-commit", acct, body) }()
		waitingOn("advisory", "%idempotency_keys%")
		Expect(messagesWith("killed after the commit")).To(BeEquivalentTo(1), "the message is committed")

		By("killing the instance, and the connection of its record of the response")
		kill(serveA)
		Expect((<-first).Status).To(BeZero(), "the client got no answer")
		Expect(a.st.DB().Exec(`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE NOT granted AND locktype = 'advisory'
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Error).
			To(Succeed())
		_, err = hold.ExecContext(context.Background(), `SELECT pg_advisory_unlock(4216)`)
		Expect(err).NotTo(HaveOccurred())
		Expect(a.st.DB().Exec(`DROP TRIGGER hold_completion ON idempotency_keys`).Error).To(Succeed())
		Expect(a.count(`SELECT COUNT(*) FROM idempotency_keys WHERE key = 'after-commit' AND status = 0 AND resource_id IS NOT NULL`)).
			To(BeEquivalentTo(1), "the response was never recorded")

		got := resolve([]string{b.addr}, "after-commit", acct, body)
		Expect(got.Replayed).To(BeTrue())
		var committed string
		Expect(a.st.DB().Raw(`SELECT id FROM messages WHERE body = ?`, "killed after the commit").Scan(&committed).Error).To(Succeed())
		Expect(got.ID).To(Equal(committed))
		Expect(messagesWith("killed after the commit")).To(BeEquivalentTo(1))
	})

	It("a send whose database connections are cut mid-request (as by a restart of PostgreSQL): a retry creates one message", func() {
		a.start()
		b.start()
		body := `{"to":"+16465550103","body":"database restarted"}`
		unlock, holder := lockMessages()
		first := make(chan keyedAnswer, 1)
		go func() { first <- keyedSend(a.addr, "restart", acct, body) }()
		waitingOn("relation", insertingMessage)

		By("terminating every other connection to the database")
		Expect(a.st.DB().Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database()
			AND backend_type = 'client backend' AND pid NOT IN (pg_backend_pid(), ?)`, holder).Error).To(Succeed())
		// The test's own idle connections went too: let its pool open new ones.
		pool, err := a.st.DB().DB()
		Expect(err).NotTo(HaveOccurred())
		pool.SetMaxIdleConns(0)
		pool.SetMaxIdleConns(40)
		var answer keyedAnswer
		Eventually(first).WithTimeout(20 * time.Second).Should(Receive(&answer))
		Expect(answer.Status).To(BeNumerically(">=", 500), "the request failed: %+v", answer)
		unlock()

		started := time.Now()
		got := resolve([]string{a.addr, b.addr}, "restart", acct, body)
		GinkgoWriter.Printf("the retry resolved %s after the failure\n", time.Since(started))
		Expect(messagesWith("database restarted")).To(BeEquivalentTo(1))
		Expect(a.count(`SELECT COUNT(*) FROM messages WHERE id = ?`, got.ID)).To(BeEquivalentTo(1))
	})
})

// A burst of keyed sends through one instance, killed with SIGKILL in the middle and started
// again: whichever step each request had reached (claimed, committed, answered), every key
// resolves to exactly one message. On SQLite (one process) and PostgreSQL.
var _ = Describe("Idempotency keys when the only instance is killed mid-burst", Ordered, func() {
	const total = 300
	var proc *serveProcess

	BeforeAll(func(ctx context.Context) {
		proc = newTestServeProcess(ctx, "the idempotency burst crash test", "--pace-local", "0")
	})

	It("resolves every key to exactly one message", func(ctx context.Context) {
		key, acct := proc.sendableAccount(ctx, "+19995550903")
		apiKeys.Store(acct, key)
		bodyOf := func(i int) string { return fmt.Sprintf(`{"to":"+1646555%04d","body":"burst %d"}`, i%50, i) }
		serve := proc.start()

		By("sending with a key each, and killing the instance mid-burst")
		var next, answered atomic.Int64
		var firstIDs sync.Map
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for {
					i := int(next.Add(1))
					if i > total {
						return
					}
					if got := keyedSend(proc.addr, fmt.Sprintf("burst-%d", i), acct, bodyOf(i)); got.Status == http.StatusCreated {
						answered.Add(1)
						firstIDs.Store(i, got.ID)
					}
				}
			})
		}
		Eventually(func() int64 { return proc.count(`SELECT COUNT(*) FROM messages`) }).WithTimeout(30 * time.Second).
			WithPolling(5 * time.Millisecond).Should(BeNumerically(">=", total/3))
		Expect(serve.Process.Kill()).To(Succeed())
		_, _ = serve.Process.Wait()
		wg.Wait()
		var inFlight int64
		Expect(proc.st.DB().Raw(`SELECT COUNT(*) FROM idempotency_keys WHERE status = 0`).Scan(&inFlight).Error).To(Succeed())
		GinkgoWriter.Printf("killed with %d sends answered 201, %d messages, %d keys without a recorded response\n",
			answered.Load(), proc.count(`SELECT COUNT(*) FROM messages`), inFlight)
		Expect(answered.Load()).To(BeNumerically("<", total), "the kill came mid-burst")

		By("starting it again and retrying every key")
		proc.start()
		started := time.Now()
		ids := map[string]bool{}
		for i := 1; i <= total; i++ {
			got := resolve([]string{proc.addr}, fmt.Sprintf("burst-%d", i), acct, bodyOf(i))
			if first, ok := firstIDs.Load(i); ok {
				Expect(got.ID).To(Equal(first), "key burst-%d replays its first answer", i)
			}
			Expect(ids[got.ID]).To(BeFalse(), "key burst-%d answered with another key's message", i)
			ids[got.ID] = true
			var body string
			Expect(proc.st.DB().Raw(`SELECT body FROM messages WHERE id = ?`, got.ID).Scan(&body).Error).To(Succeed())
			Expect(body).To(Equal(fmt.Sprintf("burst %d", i)))
		}
		GinkgoWriter.Printf("every key resolved %s after the restart\n", time.Since(started))
		Expect(proc.count(`SELECT COUNT(*) FROM messages`)).To(BeEquivalentTo(total), "one message per key")
		Expect(proc.count(`SELECT COUNT(*) FROM (SELECT body FROM messages GROUP BY body HAVING COUNT(*) > 1) d`)).To(BeZero())
	})
})
