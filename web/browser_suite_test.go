package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// The browser suite drives Debian's Chromium (through chromedp, from Go: `go test` needs no
// Node) against a real server: the components are served by Switchboard on one origin
// (http://127.0.0.1:port) and embedded by a host page on another (http://localhost:port2), as a
// customer's app embeds them. It runs on SQLite, or on PostgreSQL when
// SWITCHBOARD_TEST_DATABASE_URL is set.
func TestBrowser(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Browser Suite")
}

var (
	st    *store.Store
	core  *service.Core
	clock = &testClock{}
	// switchboardURL serves the API and the components; hostURL serves the host page.
	switchboardURL, hostURL string
	// browser is a context of the running Chromium; each spec opens its own tab from it.
	browser context.Context
	// shots is where the specs save their screenshots.
	shots string
)

// chromiumPath is Debian's Chromium, installed with apt-get when it is missing and we are root
// (.ci/run installs it beforehand). Elsewhere a missing Chromium skips the suite, except in CI.
func chromiumPath() string {
	if p := os.Getenv("SWITCHBOARD_CHROMIUM"); p != "" {
		return p
	}
	const path = "/usr/bin/chromium"
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if _, err := exec.LookPath("apt-get"); err == nil && os.Geteuid() == 0 {
		GinkgoWriter.Println("installing Debian's chromium with apt-get")
		cmd := exec.Command("sh", "-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium")
		cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
		if err := cmd.Run(); err == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		Fail("Chromium is required in CI and could not be installed (apt-get install chromium)")
	}
	Skip("Chromium is not installed (apt-get install chromium): browser specs skipped")
	return ""
}

var _ = BeforeSuite(func(ctx context.Context) {
	chromium := chromiumPath()
	var cleanup func()
	var err error
	st, cleanup, err = store.OpenTest(ctx, GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cleanup)

	apiLn, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	switchboardURL = "http://" + apiLn.Addr().String()
	log := slog.New(slog.DiscardHandler)
	core, err = service.NewCore(service.CoreConfig{
		Store: st, PublicURL: switchboardURL, Now: clock.Now, Logger: log,
		// The console's specs deliver webhooks to a local receiver.
		WebhookAllowPrivate: true,
		Carriers: func(r carriers.Reporter) ([]carriers.Carrier, error) {
			c, err := sim.New(sim.Config{Store: st.Sim(), Reporter: r, Latency: 300 * time.Millisecond, Logger: log})
			return []carriers.Carrier{c}, err
		},
	})
	Expect(err).NotTo(HaveOccurred())
	workers, err := core.StartWorkers(context.WithoutCancel(ctx))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) { Expect(workers.Stop(ctx)).To(Succeed()) })
	api, err := server.New(server.Config{Core: core, Logger: log, RateLimit: -1, Now: clock.Now})
	Expect(err).NotTo(HaveOccurred())
	serve(apiLn, api)
	DeferCleanup(func(ctx context.Context) { Expect(api.Close(ctx)).To(Succeed()) })

	hostLn, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	_, port, _ := net.SplitHostPort(hostLn.Addr().String())
	hostURL = "http://localhost:" + port // another host and port: another origin and another site
	serve(hostLn, hostApp())

	shots, err = filepath.Abs(filepath.Join("..", ".artifacts", "screenshots"))
	Expect(err).NotTo(HaveOccurred())
	Expect(os.MkdirAll(shots, 0o755)).To(Succeed())
	AddReportEntry("screenshots", shots, ReportEntryVisibilityAlways)

	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(GinkgoT().TempDir()), chromedp.WindowSize(1280, 860))
	var cancelBrowser context.CancelFunc
	browser, cancelBrowser = chromedp.NewContext(alloc)
	Expect(chromedp.Do(browser)).To(Succeed(), "start Chromium")
	DeferCleanup(func() { cancelBrowser(); cancelAlloc() })
})

// serve serves h on ln until the suite ends.
func serve(ln net.Listener, h http.Handler) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	DeferCleanup(func() { _ = srv.Close() })
}

// hostPage is a customer's page: it loads the loader from Switchboard's origin and mounts the
// components the query names, with the token it was given and a getToken callback that asks its
// own backend (/token). With gate=1, getToken waits until the spec calls window.release().
var hostPage = template.Must(template.New("host").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Acme app</title>
<style>
body { margin: 0; font-family: system-ui, 'Noto Sans', 'Liberation Sans', sans-serif; background: #eef1f5; color: #1d2433; }
nav { display: flex; align-items: center; gap: 18px; height: 52px; padding: 0 22px; background: #0f1b33; color: #fff; }
nav b { margin-right: 12px; }
nav span { display: inline-flex; align-items: center; gap: 6px; color: #c7d0e0; }
main { display: grid; grid-template-columns: minmax(0, 1fr) 360px; gap: 18px; padding: 18px 22px; }
.card { background: #fff; border-radius: 12px; overflow: hidden; box-shadow: 0 1px 3px rgba(15,27,51,.1); }
</style>
<script src="{{.Switchboard}}/embed/v1.js"></script>
</head><body>
<nav><b>Acme Dental</b><span>Schedule</span><span id="messages">Messages <span id="badge"></span></span></nav>
<main><div class="card" id="inbox"></div><div class="card" id="conversation"></div></main>
<script>
const q = new URLSearchParams(location.search)
window.gate = q.get('gate') === '1'
window.events = []
window.tokenCalls = 0
async function getToken() {
  window.tokenCalls++
  if (window.gate) await new Promise((resolve) => { window.release = resolve })
  const res = await fetch('/token?user=' + encodeURIComponent(q.get('user')))
  return (await res.json()).token
}
const mounts = (q.get('mount') || 'inbox,unread').split(',')
// The page has a pane for each component it mounts, and no empty one: a single pane takes the width.
for (const id of ['inbox', 'conversation']) {
  if (!mounts.includes(id)) document.getElementById(id).remove()
}
if (document.querySelectorAll('main > .card').length === 1) document.querySelector('main').style.gridTemplateColumns = 'minmax(0, 1fr)'
for (const c of mounts) {
  Switchboard.mount(c === 'unread' ? '#badge' : '#' + c, {
    component: c, token: q.get('token'), getToken, conversationId: q.get('conversation') || undefined,
    height: c === 'inbox' ? 600 : c === 'conversation' ? 600 : undefined,
    onEvent: (e) => window.events.push(e),
  })
}
</script>
</body></html>`))

// hostApp is the customer's web server: the host page, and the token endpoint its getToken calls
// (the customer's backend, which asks Switchboard for a user token with its API key).
func hostApp() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = hostPage.Execute(w, map[string]string{"Switchboard": switchboardURL})
	})
	mux.HandleFunc("GET /token", func(w http.ResponseWriter, r *http.Request) {
		var u store.User
		if err := st.DB().WithContext(r.Context()).Where("id = ?", r.URL.Query().Get("user")).Take(&u).Error; err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		tok, err := core.Tokens.Issue(r.Context(), u.ID, u.AccountID, 900)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"token": tok})
	})
	return mux
}

// testClock is the clock of tokens: real time plus an offset a spec can set.
type testClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *testClock) set(d time.Duration) {
	c.mu.Lock()
	c.offset = d
	c.mu.Unlock()
}

// screenshot saves a PNG of the tab (or of one element of it) under shots.
func screenshot(tab context.Context, name string, sel ...string) {
	var png []byte
	var err error
	if len(sel) > 0 {
		png, err = chromedp.Run(tab, chromedp.Screenshot(chromedp.CSS(sel[0])))
	} else {
		png, err = chromedp.Run(tab, chromedp.CaptureScreenshot())
	}
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	path := filepath.Join(shots, name+".png")
	ExpectWithOffset(1, os.WriteFile(path, png, 0o644)).To(Succeed())
	GinkgoWriter.Println("screenshot:", path)
}

// frame returns a context that works inside the tab's iframe of a component: cross-site iframes
// are targets of their own (site isolation stays on, as in users' browsers).
func frame(tab context.Context, component string) context.Context {
	var ctx context.Context
	page := chromedp.FromContext(tab).Target.TargetID
	EventuallyWithOffset(1, func() bool {
		infos, err := chromedp.Targets(tab)
		if err != nil {
			return false
		}
		for _, info := range infos {
			// This tab's iframe (another tab's, closing, may still be listed).
			if info.Type == "iframe" && (info.ParentID == page || string(info.ParentFrameID) == string(page)) &&
				strings.HasPrefix(info.URL, switchboardURL+"/embed/"+component) {
				fc, cancel := chromedp.NewContext(tab, chromedp.WithTargetID(info.TargetID))
				DeferCleanup(cancel)
				ctx = fc
				return true
			}
		}
		return false
	}).WithTimeout(20*time.Second).Should(BeTrue(), "no %s iframe", component)
	return ctx
}

// waitFor waits until a JavaScript expression is true in a context (a tab or a frame).
func waitFor(ctx context.Context, expr string, what ...any) {
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), fmt.Sprint(append([]any{"waiting for: " + expr + " "}, what...)...))
}

// evaluate returns the value of a JavaScript expression in a context.
func evaluate[T any](ctx context.Context, expr string) T {
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), expr)
	return v
}
