package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/server/contracttest"
	"github.com/switchboard/switchboard/store"
)

// cli runs the command in-process against one data directory (and so one SQLite database).
type cli struct {
	dataDir string
}

func newCLI() *cli { return &cli{dataDir: GinkgoT().TempDir()} }

// dbPath is the SQLite file the commands use by default.
func (c *cli) dbPath() string { return filepath.Join(c.dataDir, "switchboard.db") }

// run executes `switchboard <command> --data-dir <dir> <args...>`; command is the command's words
// ("key create"). It returns what the command printed to stdout.
func (c *cli) run(command string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	argv := append(strings.Fields(command), "--data-dir", c.dataDir)
	err := run(context.Background(), append(argv, args...), &stdout, &stderr)
	GinkgoWriter.Printf("switchboard %s %s\nstdout: %s\nstderr: %s\nerr: %v\n", command, strings.Join(args, " "),
		stdout.String(), stderr.String(), err)
	return stdout.String(), err
}

// json runs a command with --json, expects success, and decodes its output into v.
func (c *cli) json(v any, command string, args ...string) {
	out, err := c.run(command, append([]string{"--json"}, args...)...)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, json.Unmarshal([]byte(out), v)).To(Succeed(), "output: %s", out)
}

// createProject creates a project and returns its id.
func (c *cli) createProject(name string) string {
	var p map[string]any
	c.json(&p, "project create", "--name", name)
	return p["id"].(string)
}

// createKey creates a key for a project and returns its id and secret.
func (c *cli) createKey(project string, extra ...string) (id, secret string) {
	var k map[string]any
	c.json(&k, "key create", append([]string{"--project", project}, extra...)...)
	return k["id"].(string), k["key"].(string)
}

// openStore opens the database the commands wrote, as the server would.
func (c *cli) openStore() *store.Store {
	st, err := store.Open(context.Background(), store.Config{URL: c.dbPath()})
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	DeferCleanup(st.Close)
	return st
}

// setenv sets an environment variable for the rest of the spec.
func setenv(name, value string) {
	old, had := os.LookupEnv(name)
	Expect(os.Setenv(name, value)).To(Succeed())
	DeferCleanup(func() {
		if had {
			_ = os.Setenv(name, old)
		} else {
			_ = os.Unsetenv(name)
		}
	})
}

var (
	projectIDPattern = `^prj_[0-7][0-9a-hjkmnp-tv-z]{25}$`
	keyIDPattern     = `^key_[0-7][0-9a-hjkmnp-tv-z]{25}$`
)

var _ = Describe("switchboard", func() {
	var c *cli
	BeforeEach(func() { c = newCLI() })

	Describe("help", func() {
		It("prints the usage without arguments", func() {
			var out bytes.Buffer
			Expect(run(context.Background(), nil, &out, io.Discard)).To(Succeed())
			Expect(out.String()).To(ContainSubstring("Usage:"))
			Expect(out.String()).To(ContainSubstring("switchboard key create --project"))
		})
	})

	Describe("migrate", func() {
		It("applies the migrations, then reports the database up to date", func() {
			out, err := c.run("migrate")
			Expect(err).NotTo(HaveOccurred())
			Expect(out).To(MatchRegexp(`(?m)^applied 1: `))
			Expect(c.dbPath()).To(BeARegularFile())

			out, err = c.run("migrate")
			Expect(err).NotTo(HaveOccurred())
			Expect(out).To(Equal("database is up to date\n"))
		})

		It("reports what it applied as JSON", func() {
			var first, second struct {
				Applied []map[string]any `json:"applied"`
			}
			c.json(&first, "migrate")
			Expect(first.Applied).NotTo(BeEmpty())
			c.json(&second, "migrate")
			Expect(second.Applied).To(BeEmpty())
			n, err := c.openStore().PendingMigrations(context.Background())
			Expect(err).NotTo(HaveOccurred())
			Expect(n).To(BeZero())
		})
	})

	Describe("project", func() {
		It("creates a project and prints its id and name as JSON", func() {
			var p map[string]any
			c.json(&p, "project create", "--name", "Acme Holdings")
			Expect(p).To(HaveKeyWithValue("id", MatchRegexp(projectIDPattern)))
			Expect(p).To(HaveKeyWithValue("name", "Acme Holdings"))
			Expect(p).To(HaveKeyWithValue("locked", false))
			got, err := c.openStore().GetProject(context.Background(), p["id"].(string))
			Expect(err).NotTo(HaveOccurred())
			Expect(got.Name).To(Equal("Acme Holdings"))
		})

		It("creates a project with a readable line without --json", func() {
			out, err := c.run("project create", "--name", "Acme")
			Expect(err).NotTo(HaveOccurred())
			Expect(out).To(MatchRegexp(`^created project prj_\w{26} \(Acme\)\n$`))
		})

		It("needs --name", func() {
			_, err := c.run("project create")
			Expect(err).To(MatchError(ContainSubstring("--name")))
			_, err = c.run("project create", "--name", "  ")
			Expect(err).To(MatchError(ContainSubstring("--name")))
		})

		It("lists projects newest first", func() {
			a := c.createProject("first")
			b := c.createProject("second")
			var ps []map[string]any
			c.json(&ps, "project list")
			Expect(ps).To(HaveLen(2))
			Expect(ps[0]).To(SatisfyAll(HaveKeyWithValue("id", b), HaveKeyWithValue("name", "second")))
			Expect(ps[1]).To(SatisfyAll(HaveKeyWithValue("id", a), HaveKeyWithValue("name", "first")))
		})

		It("locks and unlocks a project, as the project list and authentication show", func() {
			p := c.createProject("Acme")
			_, secret := c.createKey(p)
			locked := func() any {
				var ps []map[string]any
				c.json(&ps, "project list")
				Expect(ps).To(HaveLen(1))
				return ps[0]["locked"]
			}
			st := c.openStore()

			var out map[string]any
			c.json(&out, "project lock", p)
			Expect(out).To(SatisfyAll(HaveKeyWithValue("id", p), HaveKeyWithValue("locked", true)))
			Expect(locked()).To(BeTrue())
			principal, err := st.Authenticate(context.Background(), secret)
			Expect(err).NotTo(HaveOccurred())
			Expect(principal.Locked).To(BeTrue())

			c.json(&out, "project unlock", p)
			Expect(out).To(HaveKeyWithValue("locked", false))
			Expect(locked()).To(BeFalse())
			principal, err = st.Authenticate(context.Background(), secret)
			Expect(err).NotTo(HaveOccurred())
			Expect(principal.Locked).To(BeFalse())
		})

		It("refuses to lock a project that does not exist, or without exactly one id", func() {
			_, err := c.run("project lock", "prj_01jtp4dsdq6de56aa0tfm2e5b3")
			Expect(err).To(MatchError(store.ErrNotFound))
			Expect(err.Error()).To(HavePrefix("project prj_01jtp4dsdq6de56aa0tfm2e5b3 not found"), "a message for people")
			Expect(err.Error()).NotTo(ContainSubstring("store:"))
			_, err = c.run("project lock")
			Expect(err).To(MatchError(ContainSubstring("project id")))
			_, err = c.run("project unlock", "prj_01jtp4dsdq6de56aa0tfm2e5b3", "prj_01jtp4dsdq6de56aa0tfm2e5b4")
			Expect(err).To(MatchError(ContainSubstring("project id")))
		})
	})

	Describe("key", func() {
		var project string
		BeforeEach(func() { project = c.createProject("Acme") })

		It("creates a live key, shown once, that authenticates for the project", func() {
			var k map[string]any
			c.json(&k, "key create", "--project", project)
			Expect(k).To(HaveKeyWithValue("id", MatchRegexp(keyIDPattern)))
			Expect(k).To(HaveKeyWithValue("key", MatchRegexp(`^sk_live_[A-Za-z0-9]{32,}$`)))

			p, err := c.openStore().Authenticate(context.Background(), k["key"].(string))
			Expect(err).NotTo(HaveOccurred())
			Expect(p.KeyID).To(Equal(k["id"]))
			Expect(p.ProjectID).To(Equal(project))
			Expect(p.Demo).To(BeFalse())
		})

		It("creates a different secret every time", func() {
			_, a := c.createKey(project)
			_, b := c.createKey(project)
			Expect(a).NotTo(Equal(b))
			Expect(strings.TrimPrefix(a, "sk_live_")[:16]).NotTo(Equal(strings.TrimPrefix(b, "sk_live_")[:16]))
		})

		It("creates a demo key with --demo", func() {
			id, secret := c.createKey(project, "--demo")
			Expect(secret).To(MatchRegexp(`^sk_demo_[A-Za-z0-9]{32,}$`))
			p, err := c.openStore().Authenticate(context.Background(), secret)
			Expect(err).NotTo(HaveOccurred())
			Expect(p.KeyID).To(Equal(id))
			Expect(p.Demo).To(BeTrue())
		})

		It("prints the secret with a warning without --json", func() {
			out, err := c.run("key create", "--project", project)
			Expect(err).NotTo(HaveOccurred())
			Expect(out).To(MatchRegexp(`(?m)^sk_live_[A-Za-z0-9]{32,}$`))
			Expect(out).To(ContainSubstring("shown once"))
		})

		It("needs --project, and an existing project", func() {
			_, err := c.run("key create")
			Expect(err).To(MatchError(ContainSubstring("--project")))
			_, err = c.run("key create", "--project", "prj_01jtp4dsdq6de56aa0tfm2e5b3")
			Expect(err).To(MatchError(store.ErrNotFound))
			Expect(err.Error()).To(HavePrefix("project prj_01jtp4dsdq6de56aa0tfm2e5b3 not found"))
		})

		It("lists a project's keys with a hint and never the secret", func() {
			live, liveSecret := c.createKey(project)
			demo, demoSecret := c.createKey(project, "--demo")
			c.createKey(c.createProject("Other"))

			out, err := c.run("key list", "--json", "--project", project)
			Expect(err).NotTo(HaveOccurred())
			Expect(out).NotTo(ContainSubstring(liveSecret))
			Expect(out).NotTo(ContainSubstring(demoSecret))
			var ks []map[string]any
			Expect(json.Unmarshal([]byte(out), &ks)).To(Succeed())
			Expect(ks).To(HaveLen(2), "only the project's keys")
			Expect(ks[0]).To(SatisfyAll(
				HaveKeyWithValue("id", demo), HaveKeyWithValue("kind", "demo"), HaveKeyWithValue("revoked_at", BeNil()),
				HaveKeyWithValue("hint", "sk_demo_…"+demoSecret[len(demoSecret)-4:]), Not(HaveKey("key")),
			))
			Expect(ks[1]).To(SatisfyAll(
				HaveKeyWithValue("id", live), HaveKeyWithValue("kind", "live"),
				HaveKeyWithValue("hint", "sk_live_…"+liveSecret[len(liveSecret)-4:]), Not(HaveKey("key")),
			))

			text, err := c.run("key list", "--project", project)
			Expect(err).NotTo(HaveOccurred())
			Expect(text).To(ContainSubstring(live))
			Expect(text).To(ContainSubstring("sk_live_…" + liveSecret[len(liveSecret)-4:]))
			Expect(text).NotTo(ContainSubstring(liveSecret))
		})

		It("needs --project to list keys", func() {
			_, err := c.run("key list")
			Expect(err).To(MatchError(ContainSubstring("--project")))
		})

		It("revokes a key, which then no longer authenticates, and lists it as revoked", func() {
			id, secret := c.createKey(project)
			_, other := c.createKey(project)
			var out map[string]any
			c.json(&out, "key revoke", id)
			Expect(out).To(SatisfyAll(HaveKeyWithValue("id", id), HaveKeyWithValue("revoked_at", Not(BeNil()))))

			st := c.openStore()
			_, err := st.Authenticate(context.Background(), secret)
			Expect(err).To(MatchError(store.ErrNotFound))
			_, err = st.Authenticate(context.Background(), other)
			Expect(err).NotTo(HaveOccurred(), "the project's other key still works")

			var ks []map[string]any
			c.json(&ks, "key list", "--project", project)
			Expect(ks).To(ContainElement(SatisfyAll(HaveKeyWithValue("id", id), HaveKeyWithValue("revoked_at", Not(BeNil())))))
		})

		It("accepts flags after the key id, as after a project id", func() {
			var lock bytes.Buffer
			Expect(run(context.Background(), []string{"project", "lock", project, "--json", "--data-dir", c.dataDir}, &lock, io.Discard)).To(Succeed())
			var locked map[string]any
			Expect(json.Unmarshal(lock.Bytes(), &locked)).To(Succeed(), lock.String())
			Expect(locked).To(SatisfyAll(HaveKeyWithValue("id", project), HaveKeyWithValue("locked", true)))

			id, secret := c.createKey(project)
			var stdout bytes.Buffer
			Expect(run(context.Background(), []string{"key", "revoke", id, "--data-dir", c.dataDir, "--json"}, &stdout, io.Discard)).To(Succeed())
			var out map[string]any
			Expect(json.Unmarshal(stdout.Bytes(), &out)).To(Succeed(), stdout.String())
			Expect(out).To(HaveKeyWithValue("id", id))
			_, err := c.openStore().Authenticate(context.Background(), secret)
			Expect(err).To(MatchError(store.ErrNotFound))
		})

		It("refuses to revoke a key that does not exist, or without exactly one id", func() {
			_, err := c.run("key revoke", "key_01jtp4dsdq6de56aa0tfm2e5b3")
			Expect(err).To(MatchError(store.ErrNotFound))
			_, err = c.run("key revoke")
			Expect(err).To(MatchError(ContainSubstring("key id")))
		})
	})

	Describe("logs", func() {
		It("lists nothing for a new project", func() {
			p := c.createProject("Acme")
			out, err := c.run("logs", "--json", "--project", p)
			Expect(err).NotTo(HaveOccurred())
			Expect(strings.TrimSpace(out)).To(Equal("[]"))
		})

		It("lists a project's request logs, newest first, up to --limit", func() {
			p := c.createProject("Acme")
			other := c.createProject("Other")
			keyID, _ := c.createKey(p)
			st := c.openStore()
			at := time.Now().UTC().Truncate(time.Second)
			Expect(st.InsertAPILogs(context.Background(), []store.APILog{
				{ProjectID: p, KeyID: keyID, RequestID: "req_1", Method: "POST", Path: "/accounts", Status: 201, DurationMicros: 1500, CreatedAt: at},
				{ProjectID: other, KeyID: "key_x", RequestID: "req_other", Method: "GET", Path: "/accounts", Status: 200, DurationMicros: 10, CreatedAt: at},
				{ProjectID: p, KeyID: keyID, RequestID: "req_2", Method: "GET", Path: "/users/usr_x", Status: 404, DurationMicros: 250, CreatedAt: at.Add(time.Second)},
			})).To(Succeed())

			var logs []map[string]any
			c.json(&logs, "logs", "--project", p)
			Expect(logs).To(HaveLen(2))
			Expect(logs[0]).To(SatisfyAll(
				HaveKeyWithValue("request_id", "req_2"), HaveKeyWithValue("method", "GET"),
				HaveKeyWithValue("path", "/users/usr_x"), HaveKeyWithValue("status", BeNumerically("==", 404)),
				HaveKeyWithValue("duration_ms", BeNumerically("~", 0.25, 1e-9)), HaveKeyWithValue("key_id", keyID),
				HaveKeyWithValue("time", Not(BeEmpty())),
			))
			Expect(logs[1]).To(SatisfyAll(
				HaveKeyWithValue("request_id", "req_1"), HaveKeyWithValue("method", "POST"),
				HaveKeyWithValue("status", BeNumerically("==", 201)), HaveKeyWithValue("duration_ms", BeNumerically("~", 1.5, 1e-9)),
			))

			c.json(&logs, "logs", "--project", p, "--limit", "1")
			Expect(logs).To(HaveLen(1))
			Expect(logs[0]).To(HaveKeyWithValue("request_id", "req_2"))

			text, err := c.run("logs", "--project", p)
			Expect(err).NotTo(HaveOccurred())
			Expect(text).To(ContainSubstring("/users/usr_x"))
			Expect(text).To(ContainSubstring("req_1"))
			Expect(text).NotTo(ContainSubstring("req_other"))
		})

		It("needs --project", func() {
			_, err := c.run("logs")
			Expect(err).To(MatchError(ContainSubstring("--project")))
		})
	})

	Describe("command line errors", func() {
		DescribeTable("refuses an unknown command",
			func(args ...string) {
				err := run(context.Background(), args, io.Discard, io.Discard)
				Expect(err).To(MatchError(ContainSubstring("unknown command")))
			},
			Entry("a made-up command", "frobnicate"),
			Entry("a made-up project subcommand", "project", "delete"),
			Entry("a made-up key subcommand", "key", "rotate"),
		)

		It("says which subcommands a command has when none is given", func() {
			err := run(context.Background(), []string{"project"}, io.Discard, io.Discard)
			Expect(err).To(MatchError(ContainSubstring("'switchboard project' needs a subcommand: create, list, lock, unlock")))
		})

		It("refuses an unknown flag", func() {
			_, err := c.run("project list", "--colour")
			Expect(err).To(MatchError(ContainSubstring("colour")))
		})
	})

	Describe("configuration", func() {
		DescribeTable("serve refuses a bad setting with an error that names it",
			func(setting string, args ...string) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				err := run(ctx, append([]string{"serve", "--data-dir", c.dataDir, "--listen", "127.0.0.1:0"}, args...), io.Discard, io.Discard)
				Expect(err).To(MatchError(ContainSubstring(setting)))
				Expect(c.dbPath()).NotTo(BeAnExistingFile(), "nothing started")
			},
			Entry("a log level that does not exist", "LOG_LEVEL", "--log-level=loud"),
			Entry("a negative rate limit", "RATE_LIMIT", "--rate-limit=-1"),
			Entry("a rate limit that is not a number", "RATE_LIMIT", "--rate-limit=fast"),
			Entry("a zero rate burst", "RATE_BURST", "--rate-burst=0"),
			Entry("trusted proxies that are not CIDRs", "TRUSTED_PROXIES", "--trusted-proxies=10.0.0.0/8,notacidr"),
			Entry("a TLS certificate without its key", "TLS_KEY", "--tls-cert=/etc/ssl/cert.pem"),
			Entry("a TLS key without its certificate", "TLS_CERT", "--tls-key=/etc/ssl/key.pem"),
			Entry("auto-migrate that is not a boolean", "AUTO_MIGRATE", "--auto-migrate=maybe"),
			Entry("a verification sender that is not a phone number", "VERIFICATION_SENDER", "--verification-sender=demo"),
		)

		It("reads a bad setting from its SWITCHBOARD_ variable too", func() {
			setenv("SWITCHBOARD_LOG_LEVEL", "loud")
			err := run(context.Background(), []string{"serve", "--data-dir", c.dataDir}, io.Discard, io.Discard)
			Expect(err).To(MatchError(ContainSubstring("LOG_LEVEL")))
		})

		It("takes the data directory from SWITCHBOARD_DATA_DIR", func() {
			dir := GinkgoT().TempDir()
			setenv("SWITCHBOARD_DATA_DIR", dir)
			Expect(run(context.Background(), []string{"project", "create", "--name", "env"}, io.Discard, io.Discard)).To(Succeed())
			Expect(filepath.Join(dir, "switchboard.db")).To(BeARegularFile())
		})

		It("lets a flag win over its variable", func() {
			setenv("SWITCHBOARD_DATA_DIR", filepath.Join(GinkgoT().TempDir(), "from-env"))
			Expect(run(context.Background(), []string{"project", "create", "--name", "flag", "--data-dir", c.dataDir}, io.Discard, io.Discard)).To(Succeed())
			Expect(c.dbPath()).To(BeARegularFile())
			Expect(os.Getenv("SWITCHBOARD_DATA_DIR")).NotTo(BeAnExistingFile())
		})

		It("takes the database from --database-url over the data directory", func() {
			db := filepath.Join(GinkgoT().TempDir(), "elsewhere.db")
			Expect(run(context.Background(), []string{"project", "create", "--name", "x", "--data-dir", c.dataDir, "--database-url", db}, io.Discard, io.Discard)).To(Succeed())
			Expect(db).To(BeARegularFile())
			Expect(c.dbPath()).NotTo(BeAnExistingFile())
		})

		It("refuses to serve a database with pending migrations when auto-migrate is off", func() {
			err := run(context.Background(), []string{"serve", "--data-dir", c.dataDir, "--listen", "127.0.0.1:0", "--auto-migrate=false"}, io.Discard, io.Discard)
			Expect(err).To(MatchError(ContainSubstring("switchboard migrate")))
		})
	})

	Describe("serve", func() {
		It("with --dev-key prints a live key and a working curl line, serves HTTPS, and stops when its context ends", func() {
			s := c.serve("--dev-key", "--public-url", "https://sb.example.test")
			banner := s.stdout.String()
			Expect(banner).To(ContainSubstring("Switchboard is running on https://" + s.addr))
			key := regexp.MustCompile(`live API key: (sk_live_[A-Za-z0-9]+)`).FindStringSubmatch(banner)
			Expect(key).To(HaveLen(2), banner)
			Expect(banner).To(MatchRegexp(`curl --cacert \S+ https://` + regexp.QuoteMeta(s.addr) + `/accounts`))
			Expect(banner).To(ContainSubstring(`-H "Authorization: Bearer ` + key[1] + `"`))

			status, body := s.do("POST", "/accounts", key[1], `{"name":"Acme Dental"}`)
			Expect(status).To(Equal(http.StatusCreated), body)
			var acct map[string]any
			Expect(json.Unmarshal([]byte(body), &acct)).To(Succeed())
			Expect(acct).To(HaveKeyWithValue("name", "Acme Dental"))

			status, body = s.do("POST", "/accounts/"+acct["id"].(string)+"/users", key[1], `{"first_name":"Brian"}`)
			Expect(status).To(Equal(http.StatusCreated), body)
			var user map[string]any
			Expect(json.Unmarshal([]byte(body), &user)).To(Succeed())
			status, body = s.do("POST", "/users/"+user["id"].(string)+"/tokens", key[1], "")
			Expect(status).To(Equal(http.StatusCreated), body)
			var tok map[string]string
			Expect(json.Unmarshal([]byte(body), &tok)).To(Succeed())
			Expect(jwtClaims(tok["token"])).To(HaveKeyWithValue("iss", "https://sb.example.test"), "--public-url is the issuer")

			status, _ = s.do("GET", "/accounts", "sk_live_notakey0000000000000000000000000000", "")
			Expect(status).To(Equal(http.StatusUnauthorized))

			Expect(s.stop()).To(Succeed())
		})

		It("with --dev-key reuses the project named local and its key on every start", func() {
			first := c.serve("--dev-key")
			Expect(first.stop()).To(Succeed())
			second := c.serve("--dev-key")
			Expect(second.stop()).To(Succeed())

			projectOf := func(banner string) string {
				m := regexp.MustCompile(`project:\s+(prj_\w+)`).FindStringSubmatch(banner)
				Expect(m).To(HaveLen(2), banner)
				return m[1]
			}
			keyOf := func(banner string) string {
				return regexp.MustCompile(`sk_live_\w+`).FindString(banner)
			}
			Expect(projectOf(second.stdout.String())).To(Equal(projectOf(first.stdout.String())))
			Expect(keyOf(first.stdout.String())).NotTo(BeEmpty())
			Expect(keyOf(second.stdout.String())).To(Equal(keyOf(first.stdout.String())), "the same key, not a new one each run")
			var ks []map[string]any
			c.json(&ks, "key list", "--project", projectOf(first.stdout.String()))
			Expect(ks).To(HaveLen(1), "no stale keys pile up")

			By("revoking it: the next start mints a new one")
			c.json(&map[string]any{}, "key revoke", ks[0]["id"].(string))
			third := c.serve("--dev-key")
			Expect(third.stop()).To(Succeed())
			Expect(keyOf(third.stdout.String())).NotTo(SatisfyAny(BeEmpty(), Equal(keyOf(first.stdout.String()))))
			var ps []map[string]any
			c.json(&ps, "project list")
			Expect(ps).To(HaveLen(1))
			Expect(ps[0]).To(HaveKeyWithValue("name", "local"))
		})

		It("without --dev-key prints no key", func() {
			s := c.serve()
			Expect(s.stdout.String()).To(BeEmpty())
			Expect(s.stop()).To(Succeed())
		})

		It("refuses plain HTTP on its optional plain listener with 403 https_required", func() {
			s := c.serve("--plain-listen", "127.0.0.1:0")
			Expect(s.plainAddr).NotTo(BeEmpty())
			resp, err := http.Get("http://" + s.plainAddr + "/healthz")
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			Expect(resp.StatusCode).To(Equal(http.StatusForbidden))
			Expect(body).To(MatchJSON(`{"error":{"type":"https_required","message":"Use HTTPS: plain HTTP requests are refused."}}`))
			Expect(s.stop()).To(Succeed())
		})

		It("applies --rate-limit and --rate-burst per key", func() {
			p := c.createProject("Acme")
			_, key := c.createKey(p)
			s := c.serve("--rate-limit=1", "--rate-burst=2")
			var statuses []int
			for range 3 {
				status, _ := s.do("GET", "/accounts", key, "")
				statuses = append(statuses, status)
			}
			Expect(statuses).To(Equal([]int{200, 200, 429}))
			Expect(s.stop()).To(Succeed())
		})

		It("disables rate limiting with --rate-limit=0, as its help says", func() {
			p := c.createProject("Acme")
			_, key := c.createKey(p)
			s := c.serve("--rate-limit=0", "--rate-burst=1")
			for i := range 5 {
				status, body := s.do("GET", "/accounts", key, "")
				Expect(status).To(Equal(http.StatusOK), "request %d: %s", i+1, body)
			}
			Expect(s.stop()).To(Succeed())
		})
	})
})

// servedAPI is a `switchboard serve` running in-process.
type servedAPI struct {
	addr, plainAddr, metricsAddr string
	// headers are sent with every request of do.
	headers        map[string]string
	stdout, stderr *syncBuffer
	client         *http.Client
	cancel         context.CancelFunc
	done           chan error
	stopped        bool
	err            error
}

// serve starts `switchboard serve` on a free loopback port and waits until it listens.
func (c *cli) serve(args ...string) *servedAPI {
	ctx, cancel := context.WithCancel(context.Background())
	s := &servedAPI{stdout: &syncBuffer{}, stderr: &syncBuffer{}, cancel: cancel, done: make(chan error, 1)}
	argv := append([]string{"serve", "--data-dir", c.dataDir, "--listen", "127.0.0.1:0"}, args...)
	go func() {
		defer GinkgoRecover()
		s.done <- run(ctx, argv, s.stdout, s.stderr)
	}()
	DeferCleanup(func() { _ = s.stop() })

	// The serving log line carries the listeners' actual addresses.
	var ready struct {
		HTTPS   string `json:"https"`
		Plain   string `json:"http_refusing"`
		Metrics string `json:"metrics"`
	}
	EventuallyWithOffset(1, func(g Gomega) {
		select {
		case err := <-s.done:
			s.stopped, s.err = true, err
			StopTrying(fmt.Sprintf("serve exited: %v\nstderr: %s", err, s.stderr.String())).Now()
		default:
		}
		for _, line := range strings.Split(s.stderr.String(), "\n") {
			if strings.Contains(line, `"switchboard is serving"`) {
				g.Expect(json.Unmarshal([]byte(line), &ready)).To(Succeed())
				g.Expect(ready.HTTPS).NotTo(BeEmpty(), "the serving line names the HTTPS listener: %s", line)
				return
			}
		}
		g.Expect(s.stderr.String()).To(ContainSubstring("switchboard is serving"))
	}).WithTimeout(30 * time.Second).WithPolling(20 * time.Millisecond).Should(Succeed())
	s.addr, s.plainAddr, s.metricsAddr = ready.HTTPS, ready.Plain, ready.Metrics

	pem, err := os.ReadFile(filepath.Join(c.dataDir, "tls", "cert.pem"))
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "serve creates a self-signed certificate in the data directory")
	roots := x509.NewCertPool()
	ExpectWithOffset(1, roots.AppendCertsFromPEM(pem)).To(BeTrue())
	s.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	DeferCleanup(s.client.CloseIdleConnections)
	return s
}

// do sends one HTTPS request, verifying the server's certificate, and returns status and body.
func (s *servedAPI) do(method, path, key, body string) (int, string) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "https://"+s.addr+path, rd)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range s.headers {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, contract.Check(req, resp.StatusCode, resp.Header, b)).To(Succeed())
	return resp.StatusCode, string(b)
}

// contract validates the served API's responses against openapi.yaml.
var contract = contracttest.MustNew()

// stop cancels the command's context and returns what run returned.
func (s *servedAPI) stop() error {
	if s.stopped {
		return s.err
	}
	s.cancel()
	select {
	case s.err = <-s.done:
	case <-time.After(30 * time.Second):
		s.err = errors.New("serve did not stop within 30 s of its context ending")
	}
	s.stopped = true
	return s.err
}

// syncBuffer is a bytes.Buffer that the serving goroutine and the spec may use together.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// jwtClaims decodes (without verifying) a JWT's claims.
func jwtClaims(token string) map[string]any {
	parts := strings.Split(token, ".")
	ExpectWithOffset(1, parts).To(HaveLen(3))
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	var m map[string]any
	ExpectWithOffset(1, json.Unmarshal(b, &m)).To(Succeed())
	return m
}
