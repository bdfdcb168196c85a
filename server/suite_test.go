package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/server/contracttest"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

func TestServer(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Server Suite")
}

var (
	// st is the suite's database: SQLite, or PostgreSQL when SWITCHBOARD_TEST_DATABASE_URL is set.
	st *store.Store
	// clock is the suite's controllable clock; tokens and the API read it.
	clock = &testClock{}
	// core is the assembled domain over st, with the simulated carrier and running job workers.
	core *service.Core
	// tokens is core's token service.
	tokens *service.Tokens
	// api is the server under test, with rate limiting off (specs that test it build their own).
	api *server.Server
)

var _ = BeforeSuite(func(ctx context.Context) {
	var cleanup func()
	var err error
	st, cleanup, err = store.OpenTest(ctx, GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cleanup)
	GinkgoWriter.Printf("database: %s\n", st.Dialect())
	core, err = service.NewCore(service.CoreConfig{
		Store: st, PublicURL: "https://switchboard.test", Now: clock.Now, Logger: testLogger(),
		// Webhook specs deliver to local receivers; a short timeout stands for the 15 s one.
		WebhookAllowPrivate: true, WebhookTimeout: webhookTestTimeout,
		// Three fetches of an inbound message's files (about 1 s and 16 s apart) stand for ten.
		InboundMediaAttempts: 3,
		// Nothing is pruned: specs move the suite's clock months ahead, and a prune by it would
		// delete every other spec's events (retention has specs of its own in store/).
		Retention: &store.Retention{},
		Carriers: func(r carriers.Reporter) ([]carriers.Carrier, error) {
			c, err := sim.New(sim.Config{Store: st.Sim(), Reporter: r, ReviewDelay: simReviewDelay, Now: clock.Now, Logger: testLogger()})
			return []carriers.Carrier{c}, err
		},
	})
	Expect(err).NotTo(HaveOccurred())
	tokens = core.Tokens
	// The workers outlive BeforeSuite, whose context ends with it.
	workers, err := core.StartWorkers(context.WithoutCancel(ctx))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) { Expect(workers.Stop(ctx)).To(Succeed()) })
	api = newAPI(server.Config{RateLimit: -1})
})

// contract validates every response of every server the suite builds against openapi.yaml, and
// consoleContract every answer of the console's API against web/console-api.yaml.
var (
	contract        = contracttest.MustNew()
	consoleContract = contracttest.MustNewConsole()
)

// newAPI builds a server over the suite's store and clock; cfg supplies anything else. Every
// response it writes is checked against the contract.
func newAPI(cfg server.Config) *server.Server {
	if cfg.Core == nil {
		cfg.Core = core
	}
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	cfg.Logger = testLogger()
	cfg.Middleware = append([]echo.MiddlewareFunc{contract.FailSpecs(), consoleContract.FailSpecs()}, cfg.Middleware...)
	s, err := server.New(cfg)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) { Expect(s.Close(ctx)).To(Succeed()) })
	return s
}

// simReviewDelay is how long the simulated carrier takes to review a campaign in the suite.
const simReviewDelay = 300 * time.Millisecond

// testLogger discards logs unless SWITCHBOARD_TEST_LOGS is set.
func testLogger() *slog.Logger {
	if os.Getenv("SWITCHBOARD_TEST_LOGS") != "" {
		return slog.New(slog.NewTextHandler(GinkgoWriter, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return discardLogger()
}

// testClock is a clock that follows real time plus an offset that specs can advance.
type testClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Advance moves the clock forward; DeferCleanup resets it.
func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
	DeferCleanup(func() { c.mu.Lock(); c.offset -= d; c.mu.Unlock() })
}

// tenant is a project with a live API key, the usual caller of a spec.
type tenant struct {
	ProjectID string
	KeyID     string
	Key       string
	api       *server.Server
}

// newTenant creates a fresh project and live key, so specs never see each other's data.
func newTenant() *tenant {
	ctx := context.Background()
	p, err := st.CreateProject(ctx, "spec "+CurrentSpecReport().LeafNodeText)
	Expect(err).NotTo(HaveOccurred())
	k, secret, err := st.CreateAPIKey(ctx, p.ID, false)
	Expect(err).NotTo(HaveOccurred())
	return &tenant{ProjectID: p.ID, KeyID: k.ID, Key: secret, api: api}
}

// withKey returns the same project calling with another key secret (a demo key, a revoked key, ...).
func (t *tenant) withKey(secret string) *tenant {
	c := *t
	c.Key = secret
	return &c
}

// response is an answer of the API.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body as a JSON object.
func (r *response) JSON() map[string]any {
	var m map[string]any
	ExpectWithOffset(1, json.Unmarshal(r.Body, &m)).To(Succeed(), "body: %s", r.Body)
	return m
}

// Into decodes the body into v.
func (r *response) Into(v any) {
	ExpectWithOffset(1, json.Unmarshal(r.Body, v)).To(Succeed(), "body: %s", r.Body)
}

func (r *response) String() string { return fmt.Sprintf("%d %s", r.Status, r.Body) }

// request sends a request through the whole Echo stack in-process. body may be nil, a string or
// []byte (sent as is) or any other value (sent as JSON). headers are name, value pairs.
func (t *tenant) request(method, path string, body any, headers ...string) *response {
	rd := requestBody(body)
	req := httptest.NewRequest(method, "https://switchboard.test"+path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if t.Key != "" {
		req.Header.Set("Authorization", "Bearer "+t.Key)
	}
	setHeaders(req, headers)
	rec := httptest.NewRecorder()
	t.api.ServeHTTP(rec, req)
	return &response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

func (t *tenant) get(path string, headers ...string) *response {
	return t.request(http.MethodGet, path, nil, headers...)
}

func (t *tenant) post(path string, body any, headers ...string) *response {
	return t.request(http.MethodPost, path, body, headers...)
}

func (t *tenant) patch(path string, body any, headers ...string) *response {
	return t.request(http.MethodPatch, path, body, headers...)
}

func (t *tenant) delete(path string, headers ...string) *response {
	return t.request(http.MethodDelete, path, nil, headers...)
}

// createAccount creates an account and returns its id.
func (t *tenant) createAccount(name string) string {
	r := t.post("/accounts", map[string]any{"name": name})
	ExpectWithOffset(1, r).To(HaveStatus(http.StatusCreated))
	return r.JSON()["id"].(string)
}

// requestBody is a spec's request body: nil for none, a string or []byte as is, anything else as JSON.
func requestBody(body any) io.Reader {
	switch b := body.(type) {
	case nil:
		return nil
	case string:
		return strings.NewReader(b)
	case []byte:
		return bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		ExpectWithOffset(2, err).NotTo(HaveOccurred())
		return bytes.NewReader(j)
	}
}

// setHeaders applies name, value pairs to a request; an empty value removes the header.
func setHeaders(req *http.Request, headers []string) {
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
}

// HaveStatus matches a response's status code, printing the body when it does not.
func HaveStatus(code int) types.GomegaMatcher {
	return WithTransform(func(r *response) int { return r.Status }, Equal(code))
}

// HaveError matches an error response: its status and the envelope's error type, with a message.
func HaveError(code int, typ string) types.GomegaMatcher {
	return SatisfyAll(
		HaveStatus(code),
		WithTransform(func(r *response) map[string]any {
			var m map[string]any
			if json.Unmarshal(r.Body, &m) != nil {
				return nil
			}
			e, _ := m["error"].(map[string]any)
			return e
		}, SatisfyAll(HaveKeyWithValue("type", typ), HaveKeyWithValue("message", Not(BeEmpty())))),
	)
}

// HaveFieldError matches a 422 validation_error whose detail names field.
func HaveFieldError(field string) types.GomegaMatcher {
	return SatisfyAll(
		HaveError(http.StatusUnprocessableEntity, "validation_error"),
		WithTransform(func(r *response) map[string]any {
			var m struct {
				Error struct {
					Detail map[string]any `json:"detail"`
				} `json:"error"`
			}
			_ = json.Unmarshal(r.Body, &m)
			return m.Error.Detail
		}, HaveKeyWithValue(field, Not(BeEmpty()))),
	)
}
