package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// account creates a project and an account in it, and returns the database with their ids.
func (c *cli) account(ctx context.Context) (st *store.Store, projectID string, a *store.Account) {
	projectID = c.createProject("Acme")
	st = c.openStore()
	a = &store.Account{ProjectID: projectID, Name: "Acme Dental"}
	ExpectWithOffset(1, st.CreateAccount(ctx, a)).To(Succeed())
	return st, projectID, a
}

// help runs a command line and returns what it printed on stdout, expecting success.
func help(args ...string) string {
	var stdout bytes.Buffer
	ExpectWithOffset(1, run(context.Background(), args, &stdout, io.Discard)).To(Succeed(), "exit 0 on %v", args)
	return stdout.String()
}

var _ = Describe("the command line", func() {
	var c *cli
	BeforeEach(func() { c = newCLI() })

	DescribeTable("-h prints the command's own help, with examples, and succeeds",
		func(args []string, usage string, hasExample bool) {
			out := help(args...)
			Expect(out).To(ContainSubstring("Usage:\n  " + usage))
			if hasExample {
				Expect(out).To(ContainSubstring("Examples:"))
			}
			if !strings.Contains(usage, "serve") {
				Expect(out).NotTo(ContainSubstring("--listen"), "not serve's flags")
				Expect(out).NotTo(ContainSubstring("--twilio-account-sid"))
			}
		},
		Entry("project", []string{"project", "-h"}, "switchboard project", false),
		Entry("key", []string{"key", "--help"}, "switchboard key", false),
		Entry("project create", []string{"project", "create", "-h"}, "switchboard project create --name NAME", true),
		Entry("key create", []string{"key", "create", "-h"}, "switchboard key create --project prj_… [--demo]", true),
		Entry("webhook deliveries", []string{"webhook", "deliveries", "-h"}, "switchboard webhook deliveries", true),
		Entry("sim inbound", []string{"sim", "inbound", "-h"}, "switchboard sim inbound", true),
		Entry("migrate status", []string{"migrate", "status", "-h"}, "switchboard migrate status", true),
		Entry("serve", []string{"serve", "-h"}, "switchboard serve", true),
		Entry("help serve", []string{"help", "serve"}, "switchboard serve", true),
	)

	It("types its flags: booleans are booleans, durations durations", func() {
		out := help("serve", "-h")
		line := func(flag string) string {
			m := regexp.MustCompile(`(?m)^\s+--` + flag + `\b.*$`).FindString(out)
			Expect(m).NotTo(BeEmpty(), flag)
			return m
		}
		Expect(line("auto-migrate")).NotTo(ContainSubstring("string"))
		Expect(line("webhook-allow-private")).NotTo(ContainSubstring("string"))
		Expect(line("database-wait")).To(ContainSubstring("duration"))
		Expect(line("rate-burst")).To(ContainSubstring(" int "))
		Expect(line("rate-limit")).To(ContainSubstring("float"))

		cfg, err := serveConfig("--auto-migrate=false", "--webhook-allow-private")
		Expect(err).NotTo(HaveOccurred())
		Expect(cfg.AutoMigrate).To(BeFalse())
		Expect(cfg.WebhookAllowPrivate).To(BeTrue(), "a boolean flag alone means true")
	})

	It("prints its version, commit, build date, Go version and schema version", func() {
		text := help("version")
		Expect(text).To(MatchRegexp(`(?m)^switchboard \S+$`))
		Expect(text).To(ContainSubstring("go:      " + runtime.Version()))
		var v map[string]any
		Expect(json.Unmarshal([]byte(help("version", "--json")), &v)).To(Succeed())
		Expect(v).To(SatisfyAll(HaveKey("version"), HaveKey("commit"), HaveKey("build_date"),
			HaveKeyWithValue("go_version", runtime.Version()),
			HaveKeyWithValue("schema_version", BeNumerically("==", store.SchemaVersion()))))
		Expect(store.SchemaVersion()).To(BeNumerically(">=", 10))
	})

	DescribeTable("writes a completion script for each shell",
		func(shell, marker string) {
			Expect(help("completion", shell)).To(ContainSubstring(marker))
		},
		Entry("bash", "bash", "__start_switchboard"),
		Entry("zsh", "zsh", "#compdef switchboard"),
		Entry("fish", "fish", "complete -c switchboard"),
	)

	It("completes subcommands and the verdicts of sim campaign", func() {
		Expect(help("__complete", "pro")).To(ContainSubstring("project"))
		Expect(help("__complete", "sim", "campaign", "")).To(SatisfyAll(ContainSubstring("approve"), ContainSubstring("reject")))
	})

	Describe("operator commands with a carrier that needs secrets", func() {
		BeforeEach(func() {
			setenv("SWITCHBOARD_CARRIER", "twilio") // and neither an account SID nor an auth token
		})

		It("run without the carrier's settings: only serve needs them", func() {
			p := c.createProject("Acme")
			var ps []map[string]any
			c.json(&ps, "project list")
			Expect(ps).To(HaveLen(1))
			var es []map[string]any
			c.json(&es, "webhook list", "--project", p)
			Expect(es).To(BeEmpty())
			var outbox []map[string]any
			c.json(&outbox, "sim outbox")
			Expect(outbox).To(BeEmpty())

			_, err := c.run("serve", "--listen", "127.0.0.1:0")
			Expect(err).To(MatchError(ContainSubstring("SWITCHBOARD_TWILIO_ACCOUNT_SID")), "serve still refuses")
		})
	})

	Describe("webhook list", func() {
		It("hides the credentials a URL carries, in text and JSON", func() {
			p := c.createProject("Acme")
			var e map[string]any
			c.json(&e, "webhook set", "--project", p, "--url", "https://hook-user:hunter2@hooks.example/in?token=s3cr3t&v=1")
			Expect(e).To(HaveKeyWithValue("url", ContainSubstring("hunter2")), "set echoes what the operator just gave")

			text, err := c.run("webhook list", "--project", p)
			Expect(err).NotTo(HaveOccurred())
			js, err := c.run("webhook list", "--project", p, "--json")
			Expect(err).NotTo(HaveOccurred())
			for _, out := range []string{text, js} {
				Expect(out).NotTo(ContainSubstring("hunter2"))
				Expect(out).NotTo(ContainSubstring("s3cr3t"))
				Expect(out).To(ContainSubstring("hook-user:xxxxx@hooks.example/in"))
			}
		})
	})

	Describe("webhook deliveries --failed", func() {
		It("includes deliveries still retrying after a failed attempt", func(ctx SpecContext) {
			st, p, a := c.account(ctx)
			c.json(&map[string]any{}, "webhook set", "--project", p, "--url", "http://127.0.0.1:9/hooks", "--webhook-allow-private")
			var events []string
			for range 3 {
				Expect(st.Tx(ctx, func(tx *store.Store) error {
					e, err := store.NewEvent(p, a.ID, "message.sent", map[string]any{"id": "msg_x"})
					if err != nil {
						return err
					}
					evs := []store.Event{e}
					err = webhooks.Publish(ctx, tx, evs...)
					events = append(events, evs[0].ID)
					return err
				})).To(Succeed())
			}
			var all []map[string]any
			c.json(&all, "webhook deliveries", "--project", p)
			Expect(all).To(HaveLen(3))
			byEvent := map[string]string{}
			for _, d := range all {
				byEvent[d["event_id"].(string)] = d["id"].(string)
			}
			status := 503
			Expect(st.UpdateWebhookDelivery(ctx, byEvent[events[0]], map[string]any{"attempts": 2, "last_status": status,
				"last_error": "HTTP 503", "next_attempt_at": time.Now().Add(5 * time.Minute)})).To(Succeed())
			Expect(st.UpdateWebhookDelivery(ctx, byEvent[events[1]], map[string]any{"status": store.DeliveryFailed, "attempts": 8})).To(Succeed())

			var failing []map[string]any
			c.json(&failing, "webhook deliveries", "--project", p, "--failed")
			Expect(failing).To(ConsistOf(
				SatisfyAll(HaveKeyWithValue("event_id", events[0]), HaveKeyWithValue("status", "pending")),
				SatisfyAll(HaveKeyWithValue("event_id", events[1]), HaveKeyWithValue("status", "failed")),
			), "not the delivery that has not been attempted yet")
		})
	})

	Describe("sim inbound", func() {
		It("prints the message's msg_ id, as the API knows it", func(ctx SpecContext) {
			st, p, a := c.account(ctx)
			now := time.Now().UTC()
			Expect(st.DB().Exec(`INSERT INTO phone_numbers (id, project_id, account_id, number, type, country, metadata, carrier,
				created_at, updated_at) VALUES (?, ?, ?, '+19995550778', 'short_code', 'US', '{}', 'sim', ?, ?)`,
				store.NewID(store.PrefixPhoneNumber), p, a.ID, now, now).Error).To(Succeed())

			var out map[string]any
			c.json(&out, "sim inbound", "--from", "+14155550199", "--to", "+19995550778", "--body", "Yes, 3pm works")
			Expect(out).To(HaveKeyWithValue("message_id", MatchRegexp(`^msg_\w{26}$`)))
			m, err := st.GetMessage(ctx, p, out["message_id"].(string))
			Expect(err).NotTo(HaveOccurred())
			Expect(m.Body).To(HaveValue(Equal("Yes, 3pm works")))
			Expect(out).To(HaveKeyWithValue("conversation_id", m.ConversationID))

			text, err := c.run("sim inbound", "--from", "+14155550199", "--to", "+19995550778", "--body", "again")
			Expect(err).NotTo(HaveOccurred())
			Expect(text).To(MatchRegexp(`^received msg_\w{26} from \+14155550199 to \+19995550778`))

			_, err = c.run("sim inbound", "--from", "+14155550199", "--to", "+19995550779", "--body", "nobody")
			Expect(err).To(MatchError(ContainSubstring("no account holds +19995550779")))
		})
	})

	It("keeps every error free of package prefixes", func() {
		_, err := c.run("key revoke", "key_01jtp4dsdq6de56aa0tfm2e5b3")
		Expect(err).To(MatchError("API key key_01jtp4dsdq6de56aa0tfm2e5b3 not found (check the id, e.g. with a list command)"))
		_, err = c.run("webhook replay", "whd_01h455vb4pex5vsknk084sn02q")
		Expect(err.Error()).To(SatisfyAll(HavePrefix("delivery or event whd_01h455vb4pex5vsknk084sn02q not found"), Not(ContainSubstring("store:"))))
		_, err = c.run("webhook set", "--project", "prj_01h455vb4pex5vsknk084sn02q", "--url", "ftp://x")
		Expect(strings.HasPrefix(err.Error(), "validation_error")).To(BeFalse(), err.Error())
	})
})

var _ = Describe("migrate status and backup", func() {
	var c *cli
	BeforeEach(func() { c = newCLI() })

	It("lists every migration as pending on a new database, then as applied, without changing anything itself", func() {
		var before struct {
			Migrations    []map[string]any `json:"migrations"`
			Pending       int              `json:"pending"`
			SchemaVersion int              `json:"schema_version"`
		}
		c.json(&before, "migrate status")
		Expect(before.SchemaVersion).To(Equal(store.SchemaVersion()))
		// Versions may leave gaps (an unlanded branch's number): count the migrations, and the
		// schema version is the last one's.
		Expect(before.Migrations).NotTo(BeEmpty())
		Expect(before.Migrations[len(before.Migrations)-1]).To(HaveKeyWithValue("version", BeNumerically("==", store.SchemaVersion())))
		Expect(before.Pending).To(Equal(len(before.Migrations)))
		Expect(before.Migrations).To(HaveEach(HaveKeyWithValue("applied_at", BeNil())))
		text, err := c.run("migrate status")
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(ContainSubstring("pending: run 'switchboard migrate'"))

		_, err = c.run("migrate")
		Expect(err).NotTo(HaveOccurred())
		var after struct {
			Migrations []map[string]any `json:"migrations"`
			Pending    int              `json:"pending"`
		}
		c.json(&after, "migrate status")
		Expect(after.Pending).To(BeZero())
		Expect(after.Migrations).To(HaveLen(len(before.Migrations)))
		Expect(after.Migrations).To(HaveEach(HaveKeyWithValue("applied_at", Not(BeNil()))))
		text, err = c.run("migrate status")
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(HaveSuffix("database is up to date\n"))
	})

	It("backs a SQLite database up to a new file that opens with the same data, and refuses to overwrite one", func(ctx SpecContext) {
		p := c.createProject("Backed up")
		to := filepath.Join(GinkgoT().TempDir(), "backup.db")
		var out map[string]any
		c.json(&out, "backup", "--to", to)
		Expect(out).To(SatisfyAll(HaveKeyWithValue("file", to), HaveKeyWithValue("bytes", BeNumerically(">", 0))))
		copied, err := store.Open(ctx, store.Config{URL: to})
		Expect(err).NotTo(HaveOccurred())
		defer copied.Close()
		got, err := copied.GetProject(ctx, p)
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Name).To(Equal("Backed up"))

		_, err = c.run("backup", "--to", to)
		Expect(err).To(MatchError(ContainSubstring("already exists")))
		_, err = c.run("backup")
		Expect(err).To(MatchError(ContainSubstring("--to is required")))
	})

	It("sends a PostgreSQL operator to pg_dump", func(ctx SpecContext) {
		db := freshPostgres(ctx)
		_, err := c.run("backup", "--database-url", db, "--to", filepath.Join(GinkgoT().TempDir(), "x.db"))
		Expect(err).To(MatchError(ContainSubstring("pg_dump")))
	})
})
