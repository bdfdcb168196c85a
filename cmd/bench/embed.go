package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard/switchboard/store"
	"github.com/switchboard/switchboard/web"
)

// runEmbed measures the embedded inbox's first render (issue 20): the bundle's gzipped size, then,
// per database and inbox size, the time to fetch everything the inbox needs before it shows its
// first page (the page, its script and styles, then the first page of conversations and the
// unread totals, as the component requests them), and, when Debian's Chromium is installed, the
// time from navigation to the first conversation drawn in a real browser.
func runEmbed(ctx context.Context, b *Bench) error {
	if err := reportBundle(b.rep); err != nil {
		return err
	}
	return b.EachDatabase(ctx, func(ctx context.Context, db *Database) error {
		s, err := b.startAPI(ctx, db, apiConfig{})
		if err != nil {
			return err
		}
		defer s.Close()
		for _, n := range []int{100, 1000, 10000} {
			acct, user, secret, err := seedInbox(ctx, db.Store, s.ProjectID, n)
			if err != nil {
				return err
			}
			token, err := s.Core.Tokens.Issue(ctx, user, acct, 3600)
			if err != nil {
				return err
			}
			times, bytes, err := httpFirstRender(ctx, s, acct, token, 30)
			if err != nil {
				return err
			}
			b.rep.Note("embed db=%s conversations=%d: HTTP first render (page, script and styles, first 25 conversations and totals) p50 %s p95 %s, %d bytes on the wire",
				db.Name, n, pct(times, 50), pct(times, 95), bytes)
			if chromium := os.Getenv("SWITCHBOARD_CHROMIUM"); chromium != "" || fileExists("/usr/bin/chromium") {
				if chromium == "" {
					chromium = "/usr/bin/chromium"
				}
				u := fmt.Sprintf("%s/embed/inbox?user_id=%s&token=%s", s.URL, user, secret)
				times, err := browserFirstRender(ctx, chromium, u, 10)
				if err != nil {
					return err
				}
				b.rep.Note("embed db=%s conversations=%d: Chromium, navigation to the first conversation drawn (cold cache) p50 %s p95 %s",
					db.Name, n, pct(times, 50), pct(times, 95))
			}
		}
		return nil
	})
}

// reportBundle notes the gzipped size of the front end's scripts and styles.
func reportBundle(rep *Reporter) error {
	var js, css, loader int
	err := fs.WalkDir(web.Dist, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(web.Dist, p)
		if err != nil {
			return err
		}
		n := gzipLen(b)
		switch {
		case p == "loader/v1.js":
			loader = n
		case strings.HasPrefix(p, "ui/assets/embed") && path.Ext(p) == ".js":
			js += n
		case strings.HasPrefix(p, "ui/assets/") && path.Ext(p) == ".css" && !strings.Contains(p, "demo"):
			css += n
		}
		return nil
	})
	if err != nil {
		return err
	}
	rep.Note("embed bundle (gzip): components' script %.1f kB (target < 60 kB), styles %.1f kB, loader /embed/v1.js %.1f kB",
		float64(js)/1000, float64(css)/1000, float64(loader)/1000)
	return nil
}

func gzipLen(b []byte) int {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return buf.Len()
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// seedInbox makes an account with a number, n conversations of two messages each (an inbound
// question, an outbound answer), a user and a publishable token; written in bulk.
func seedInbox(ctx context.Context, st *store.Store, projectID string, n int) (acct, user, secret string, err error) {
	a := &store.Account{ProjectID: projectID, Name: fmt.Sprintf("Inbox of %d", n)}
	if err = st.CreateAccount(ctx, a); err != nil {
		return
	}
	db := st.DB().WithContext(ctx)
	now := time.Now().UTC().Add(-time.Duration(n) * time.Second)
	number := store.NewID(store.PrefixPhoneNumber)
	if err = db.Exec(`INSERT INTO phone_numbers (id, project_id, account_id, number, type, country, metadata, carrier, created_at, updated_at)
		VALUES (?, ?, ?, ?, 'local', 'US', '{}', 'sim', ?, ?)`, number, projectID, a.ID, fmt.Sprintf("+1998%07d", n), now, now).Error; err != nil {
		return
	}
	const batch = 200
	for i := 0; i < n; i += batch {
		var contacts, convs, msgs []string
		var cArgs, vArgs, mArgs []any
		for j := i; j < min(i+batch, n); j++ {
			at := now.Add(time.Duration(j) * time.Second)
			ctc, cnv := store.NewID(store.PrefixContact), store.NewID(store.PrefixConversation)
			handset := fmt.Sprintf("+1646%07d", j)
			contacts = append(contacts, "(?, ?, ?, ?, ?, '{}', FALSE, FALSE, ?, ?)")
			cArgs = append(cArgs, ctc, projectID, a.ID, handset, fmt.Sprintf("Customer %d", j), at, at)
			convs = append(convs, "(?, ?, ?, ?, ?, ?)")
			vArgs = append(vArgs, cnv, projectID, a.ID, number, ctc, at)
			for k, dir := range []string{store.DirectionInbound, store.DirectionOutbound} {
				status, from, to := store.StatusReceived, handset, "+19980000000"
				if dir == store.DirectionOutbound {
					status, from, to = store.StatusDelivered, to, from
				}
				mat := at.Add(time.Duration(k) * 100 * time.Millisecond)
				msgs = append(msgs, "(?, ?, ?, ?, ?, 'local', ?, ?, ?, ?, '{}', 'gsm7', 1, 'sms', ?, ?, 'sim', ?, ?)")
				mArgs = append(mArgs, store.NewID(store.PrefixMessage), projectID, a.ID, cnv, number, ctc, dir, status,
					fmt.Sprintf("Message %d of conversation %d: is Friday at 10 still free?", k, j), from, to, mat, mat)
			}
		}
		if err = db.Exec(`INSERT INTO contacts (id, project_id, account_id, phone_number, first_name, metadata, outbound_disabled,
			opted_out, created_at, updated_at) VALUES `+strings.Join(contacts, ", "), cArgs...).Error; err != nil {
			return
		}
		if err = db.Exec(`INSERT INTO conversations (id, project_id, account_id, phone_number_id, contact_id, created_at) VALUES `+
			strings.Join(convs, ", "), vArgs...).Error; err != nil {
			return
		}
		if err = db.Exec(`INSERT INTO messages (id, project_id, account_id, conversation_id, phone_number_id, sender_type, contact_id,
			direction, status, body, metadata, encoding, segments, type, from_number, to_number, carrier, created_at, updated_at) VALUES `+
			strings.Join(msgs, ", "), mArgs...).Error; err != nil {
			return
		}
	}
	u := &store.User{ProjectID: projectID, AccountID: a.ID, FirstName: "Bench"}
	if err = st.CreateUser(ctx, u); err != nil {
		return
	}
	_, secret, err = st.CreatePublishableToken(ctx, a.ID)
	return a.ID, u.ID, secret, err
}

var assetRef = regexp.MustCompile(`(?:src|href)="(/ui/assets/[^"]+)"`)

// httpFirstRender fetches what the inbox needs before its first page shows, runs times after one
// unmeasured run: the page, then its assets in parallel, then the conversations and totals in
// parallel, as a browser with an empty cache would. It returns each run's time and the bytes read.
func httpFirstRender(ctx context.Context, s *apiServer, acct, token string, runs int) ([]time.Duration, int, error) {
	get := func(p string, auth bool) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+p, nil)
		if err != nil {
			return 0, "", err
		}
		req.Header.Set("Accept-Encoding", "gzip")
		if auth {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := s.Client.Transport.RoundTrip(req) // RoundTrip: the body as sent, gzipped or not
		if err != nil {
			return 0, "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err == nil && res.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s: %d %s", p, res.StatusCode, b)
		}
		if err == nil && res.Header.Get("Content-Encoding") == "gzip" {
			var zr *gzip.Reader
			if zr, err = gzip.NewReader(bytes.NewReader(b)); err == nil {
				plain, rerr := io.ReadAll(zr)
				return len(b), string(plain), rerr
			}
		}
		return len(b), string(b), err
	}
	parallel := func(fns ...func() (int, error)) (int, error) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		total, errs := 0, []error{}
		for _, fn := range fns {
			wg.Go(func() {
				n, err := fn()
				mu.Lock()
				total += n
				errs = append(errs, err)
				mu.Unlock()
			})
		}
		wg.Wait()
		return total, errors.Join(errs...)
	}
	var times []time.Duration
	wire := 0
	for i := 0; i <= runs; i++ {
		start := time.Now()
		n, page, err := get("/embed/inbox?account="+acct, false)
		if err != nil {
			return nil, 0, err
		}
		var assets []func() (int, error)
		for _, m := range assetRef.FindAllStringSubmatch(page, -1) {
			assets = append(assets, func() (int, error) { n, _, err := get(m[1], false); return n, err })
		}
		na, err := parallel(assets...)
		if err != nil {
			return nil, 0, err
		}
		nd, err := parallel(
			func() (int, error) { n, _, err := get("/embed/api/conversations?limit=25", true); return n, err },
			func() (int, error) { n, _, err := get("/embed/api/unread", true); return n, err })
		if err != nil {
			return nil, 0, err
		}
		if i > 0 {
			times = append(times, time.Since(start))
		}
		wire = n + na + nd
	}
	return times, wire, nil
}

// browserFirstRender loads the inbox in Chromium (each run in a new browser context, so with an
// empty cache, opened with a publishable token so that it needs no host page) and measures the
// time from navigation to the first conversation row in the document.
func browserFirstRender(ctx context.Context, chromium, url string, runs int) ([]time.Duration, error) {
	dir, err := os.MkdirTemp("", "switchboard-bench-chromium-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.IgnoreCertErrors, chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(dir), chromedp.WindowSize(1280, 800))
	defer cancelAlloc()
	browser, cancel := chromedp.NewContext(alloc)
	defer cancel()
	if err := chromedp.Do(browser); err != nil {
		return nil, fmt.Errorf("start chromium: %w", err)
	}
	var times []time.Duration
	for i := 0; i <= runs; i++ {
		tab, cancelTab := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
		err := chromedp.Do(tab, chromedp.Navigate(url))
		var ms float64
		if err == nil {
			ms, err = chromedp.Run(tab, chromedp.Poll[float64](
				`document.querySelector('.sb-row') && performance.now()`, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(30*time.Second)))
		}
		cancelTab()
		if err != nil {
			return nil, fmt.Errorf("chromium first render: %w", err)
		}
		if i > 0 { // the first run warms the server; every run's browser context starts with an empty cache
			times = append(times, time.Duration(ms*float64(time.Millisecond)))
		}
	}
	return times, nil
}

// pct returns the p-th percentile of durations.
func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, len(s)*p/100)].Round(100 * time.Microsecond)
}
