package server_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// tcpProxy forwards connections to a TCP address until stopped, and can start again on the
// same port: a database that goes away and comes back, as in a restart or a failover.
type tcpProxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

func newTCPProxy(target string) *tcpProxy {
	p := &tcpProxy{target: target}
	p.start("127.0.0.1:0")
	DeferCleanup(p.stop)
	return p
}

func (p *tcpProxy) start(addr string) {
	ln, err := net.Listen("tcp", addr)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
			go func() { _, _ = io.Copy(c, up); _ = c.Close() }()
		}
	}()
}

// stop closes the port and cuts every connection: connecting is refused from now on.
func (p *tcpProxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// restart opens the same port again.
func (p *tcpProxy) restart() { p.start(p.addr) }

var _ = Describe("An unreachable database", func() {
	var (
		t     *tenant
		proxy *tcpProxy
		dbURL *url.URL
	)
	BeforeEach(func(ctx context.Context) {
		if st.Dialect() != store.Postgres {
			Skip("PostgreSQL only: its connections go through a proxy that the spec stops")
		}
		var name string
		Expect(st.DB().WithContext(ctx).Raw("SELECT current_database()").Scan(&name).Error).To(Succeed())
		var err error
		dbURL, err = url.Parse(os.Getenv(store.TestDatabaseEnv))
		Expect(err).NotTo(HaveOccurred())
		dbURL.Path = "/" + name
		t = newTenant()
	})

	// dbAt is the suite's database URL reached at host ("" for its own) with extra parameters.
	dbAt := func(host string, params ...string) *url.URL {
		u := *dbURL
		if host != "" {
			u.Host = host
		}
		q := u.Query()
		for i := 0; i+1 < len(params); i += 2 {
			q.Set(params[i], params[i+1])
		}
		u.RawQuery = q.Encode()
		return &u
	}
	// apiOver builds an API whose store reaches the suite's database at u.
	apiOver := func(ctx context.Context, u *url.URL) *server.Server {
		pst, err := store.Open(ctx, store.Config{URL: u.String(), MaxOpenConns: 2})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(pst.Close)
		pcore, err := service.NewCore(service.CoreConfig{
			Store: pst, PublicURL: "https://switchboard.test", Logger: testLogger(),
			Carriers: func(r carriers.Reporter) ([]carriers.Carrier, error) {
				c, err := sim.New(sim.Config{Store: pst.Sim(), Reporter: r, Logger: testLogger()})
				return []carriers.Carrier{c}, err
			},
		})
		Expect(err).NotTo(HaveOccurred())
		return newAPI(server.Config{Core: pcore, RateLimit: -1})
	}

	It("answers 503 service_unavailable with Retry-After while it cannot be reached, then serves again", func(ctx context.Context) {
		proxy = newTCPProxy(dbURL.Host)
		t.api = apiOver(ctx, dbAt(proxy.addr))
		account := t.createAccount("Acme Dental")
		Expect(t.get("/accounts/" + account)).To(HaveStatus(http.StatusOK))
		// Not read yet: GET /accounts/{id} answers an account read within the last TTL of the
		// account cache from memory (store.AccountCache), so only this one needs the database.
		unread := t.createAccount("Not read yet")

		proxy.stop()
		unavailable := func(r *response) {
			GinkgoHelper()
			Expect(r.Status).To(Equal(http.StatusServiceUnavailable), r.String())
			Expect(r.Header.Get("Retry-After")).To(Equal("2"))
			if len(r.Body) > 0 {
				Expect(r).To(HaveError(http.StatusServiceUnavailable, "service_unavailable"))
			}
		}
		for _, r := range []*response{
			t.get("/accounts/" + unread),
			t.get("/accounts"),
			t.post("/accounts", map[string]any{"name": "During the outage"}),
			t.patch("/accounts/"+account, map[string]any{"name": "Renamed"}),
			t.request(http.MethodHead, "/accounts/"+unread, nil),
		} {
			unavailable(r)
		}
		// The account read before the outage needs the database again once its answer expires
		// (store.DefaultCacheTTL, 500 ms).
		Eventually(func() int { return t.get("/accounts/" + account).Status }).WithTimeout(time.Second).WithPolling(50 * time.Millisecond).
			Should(Equal(http.StatusServiceUnavailable))
		unavailable(t.get("/accounts/" + account))

		proxy.restart()
		Eventually(func() int { return t.get("/accounts/" + account).Status }).WithTimeout(10 * time.Second).Should(Equal(http.StatusOK))
		Expect(t.get("/accounts/"+account).JSON()).To(HaveKeyWithValue("name", "Acme Dental"), "nothing written during the outage")
	})

	It("never answers 500 when its connections are terminated (pg_terminate_backend, 57P01): a retry gets through", func(ctx context.Context) {
		t.api = apiOver(ctx, dbAt("", "application_name", "sb_terminated"))
		statuses := map[int]int{}
		for range 5 {
			Expect(t.get("/accounts")).To(HaveStatus(http.StatusOK))
			var n int
			Expect(st.DB().WithContext(ctx).Raw(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'sb_terminated'`).
				Scan(&n).Error).To(Succeed())
			Expect(n).To(BeNumerically(">=", 1))
			r := t.get("/accounts")
			statuses[r.Status]++
			if r.Status != http.StatusOK {
				Expect(r).To(HaveError(http.StatusServiceUnavailable, "service_unavailable"))
				Expect(r.Header.Get("Retry-After")).To(Equal("2"))
			}
		}
		GinkgoWriter.Printf("answers right after the backends were terminated: %v\n", statuses)
	})

	It("keeps 500 internal_error for a database that answers with a real failure", func(ctx context.Context) {
		// A search path with none of the tables: every query fails, every time.
		t.api = apiOver(ctx, dbAt("", "search_path", "no_such_schema"))
		r := t.get("/accounts")
		Expect(r).To(HaveError(http.StatusInternalServerError, "internal_error"))
		Expect(r.Header.Get("Retry-After")).To(BeEmpty())
	})
})
