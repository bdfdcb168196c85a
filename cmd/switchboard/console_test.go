package main

import (
	"context"
	"encoding/csv"
	"net/http"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

var _ = Describe("switchboard console and usage", func() {
	var c *cli
	BeforeEach(func() { c = newCLI() })

	It("creates a console user with a one-time password, gives an existing one a role, lists and resets them, all audited", func() {
		project := c.createProject("Acme")
		var out map[string]any
		c.json(&out, "console user create", "--email", "Ops@Acme.example", "--project", project, "--role", "owner")
		Expect(out).To(SatisfyAll(HaveKeyWithValue("email", "ops@acme.example"), HaveKeyWithValue("role", "owner"),
			HaveKeyWithValue("one_time_password", MatchRegexp(`^[a-z2-7]{5}(-[a-z2-7]{5}){3}$`))))
		other := c.createProject("Other")
		text, err := c.run("console user create", "--email", "ops@acme.example", "--project", other, "--role", "viewer")
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(ContainSubstring("ops@acme.example is viewer of " + other))
		Expect(text).NotTo(ContainSubstring("one-time password"), "an existing user keeps their password")

		var users []map[string]any
		c.json(&users, "console user list")
		Expect(users).To(ConsistOf(SatisfyAll(HaveKeyWithValue("email", "ops@acme.example"),
			HaveKeyWithValue("projects", Equal(map[string]any{project: "owner", other: "viewer"})))))

		text, err = c.run("console user reset-password", "--email", "ops@acme.example")
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(MatchRegexp(`one-time password of ops@acme.example: [a-z2-7-]{23}`))
		es, _, err := c.openStore().ListAudit(context.Background(), project, store.Page{})
		Expect(err).NotTo(HaveOccurred())
		Expect(es[0]).To(SatisfyAll(HaveField("Action", "member.set"), HaveField("Via", "cli"), HaveField("ActorEmail", HavePrefix("command line ("))))

		_, err = c.run("console user create", "--email", "x@acme.example", "--project", "prj_01jtp4dsdq6de56aa0tfm2e5b3")
		Expect(err).To(MatchError(ContainSubstring("project prj_01jtp4dsdq6de56aa0tfm2e5b3 not found")))
		_, err = c.run("console user create", "--email", "x@acme.example", "--project", project, "--role", "admin")
		Expect(err).To(MatchError(ContainSubstring("owner, developer or viewer")))
		_, err = c.run("console user reset-password", "--email", "nobody@acme.example")
		Expect(err).To(MatchError(ContainSubstring("not found")))
	})

	It("audits what operators change from the command line, as the console does", func() {
		project := c.createProject("Acme")
		id, _ := c.createKey(project)
		c.json(&map[string]any{}, "key revoke", id)
		es, _, err := c.openStore().ListAudit(context.Background(), project, store.Page{})
		Expect(err).NotTo(HaveOccurred())
		actions := []string{}
		for _, e := range es {
			actions = append(actions, e.Action)
		}
		Expect(actions).To(Equal([]string{"api_key.revoke", "api_key.create", "project.create"}))
	})

	It("reports usage per account and day, as a table, JSON and CSV", func() {
		project := c.createProject("Acme")
		st := c.openStore()
		ctx := context.Background()
		acct := &store.Account{ProjectID: project, Name: "Acme Dental"}
		Expect(st.CreateAccount(ctx, acct)).To(Succeed())
		text, err := c.run("usage", "--project", project)
		Expect(err).NotTo(HaveOccurred())
		Expect(text).To(ContainSubstring("no usage from"))
		today := time.Now().UTC().Format(time.DateOnly)
		out, err := c.run("usage", "--project", project, "--csv", "--from", today, "--to", today)
		Expect(err).NotTo(HaveOccurred())
		rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		Expect(err).NotTo(HaveOccurred())
		Expect(rows).To(HaveLen(1), "the header only")
		Expect(rows[0][0]).To(Equal("date"))
		_, err = c.run("usage", "--project", project, "--from", "monday")
		Expect(err).To(MatchError(ContainSubstring("--from")))
		_, err = c.run("usage")
		Expect(err).To(MatchError(ContainSubstring("--project")))
	})

	It("serve --dev-key prints the console's address and a one-time password of the local project's owner, which signs in", func() {
		s := c.serve("--dev-key")
		banner := s.stdout.String()
		Expect(banner).To(ContainSubstring("Operator console: https://" + s.addr + "/console/"))
		m := regexp.MustCompile(`one-time password:\s+(\S+)`).FindStringSubmatch(banner)
		Expect(m).To(HaveLen(2), banner)

		req, err := http.NewRequest(http.MethodPost, "https://"+s.addr+"/console/api/login",
			strings.NewReader(`{"email":"owner@localhost","password":"`+m[1]+`"}`))
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Content-Type", "application/json")
		res, err := s.client.Do(req)
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusOK))
		Expect(res.Header.Get("Set-Cookie")).To(ContainSubstring("__Host-switchboard_console="))
		Expect(s.stop()).To(Succeed())

		By("once they chose a password of their own, the next start prints none")
		u, err := c.openStore().ConsoleUserByEmail(context.Background(), "owner@localhost")
		Expect(err).NotTo(HaveOccurred())
		Expect(c.openStore().UpdateConsoleUser(context.Background(), u.ID, map[string]any{"password_one_time": false})).To(Succeed())
		again := c.serve("--dev-key")
		Expect(again.stdout.String()).To(ContainSubstring("with the password you chose"))
		Expect(again.stdout.String()).NotTo(ContainSubstring("one-time password:"))
	})
})
