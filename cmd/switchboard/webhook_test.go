package main

import (
	"context"
	"encoding/base64"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

var _ = Describe("switchboard webhook", func() {
	var (
		c       *cli
		project string
		account string
		st      *store.Store
	)
	BeforeEach(func() {
		c = newCLI()
		project = c.createProject("Acme")
		st = c.openStore()
		a := &store.Account{ProjectID: project, Name: "Acme Dental"}
		Expect(st.CreateAccount(context.Background(), a)).To(Succeed())
		account = a.ID
	})

	// set configures an endpoint for the project and returns what the command printed.
	set := func(url string, extra ...string) map[string]any {
		var e map[string]any
		c.json(&e, "webhook set", append([]string{"--project", project, "--url", url, "--webhook-allow-private=true"}, extra...)...)
		return e
	}
	// event records an event of the project the way the platform does, in a transaction of its own.
	event := func(typ string) string {
		var id string
		Expect(st.Tx(context.Background(), func(tx *store.Store) error {
			e, err := store.NewEvent(project, account, typ, map[string]any{"id": "msg_x"})
			if err != nil {
				return err
			}
			evs := []store.Event{e}
			err = webhooks.Publish(context.Background(), tx, evs...)
			id = evs[0].ID
			return err
		})).To(Succeed())
		return id
	}
	deliveries := func(extra ...string) []map[string]any {
		var ds []map[string]any
		c.json(&ds, "webhook deliveries", append([]string{"--project", project}, extra...)...)
		return ds
	}
	// fail marks a delivery failed for good, as its last attempt does.
	fail := func(id string) {
		Expect(st.UpdateWebhookDelivery(context.Background(), id, map[string]any{"status": store.DeliveryFailed})).To(Succeed())
	}

	It("sets an endpoint with a fresh whsec_ secret of 24 random bytes, subscribed to every event by default", func() {
		e := set("http://127.0.0.1:9/hooks")
		Expect(e).To(SatisfyAll(
			HaveKeyWithValue("id", MatchRegexp(`^whe_[0-7][0-9a-hjkmnp-tv-z]{25}$`)),
			HaveKeyWithValue("url", "http://127.0.0.1:9/hooks"), HaveKeyWithValue("project_id", project),
			HaveKeyWithValue("events", BeEmpty()), HaveKeyWithValue("enabled", true),
		))
		secret := e["secret"].(string)
		Expect(secret).To(HavePrefix("whsec_"))
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
		Expect(err).NotTo(HaveOccurred())
		Expect(key).To(HaveLen(24))
		Expect(set("http://127.0.0.1:9/other")["secret"]).NotTo(Equal(secret), "every endpoint has its own secret")
	})

	It("updates the endpoint of the same URL instead of adding one, keeping its secret", func() {
		first := set("http://127.0.0.1:9/hooks")
		again := set("http://127.0.0.1:9/hooks", "--events", "message.delivered, message.failed")
		Expect(again["id"]).To(Equal(first["id"]))
		Expect(again["secret"]).To(Equal(first["secret"]))
		Expect(again["events"]).To(Equal([]any{"message.delivered", "message.failed"}))
		var list []map[string]any
		c.json(&list, "webhook list", "--project", project)
		Expect(list).To(ConsistOf(SatisfyAll(HaveKeyWithValue("id", first["id"]), Not(HaveKey("secret")))), "list never shows a secret")
	})

	DescribeTable("refuses what cannot be an endpoint, and adds nothing",
		func(want string, args ...string) {
			// Entries are built before the spec's project exists: PROJECT stands for it.
			a := make([]string, len(args))
			for i := range args {
				a[i] = strings.ReplaceAll(args[i], "PROJECT", project)
			}
			_, err := c.run("webhook set", a...)
			Expect(err).To(MatchError(ContainSubstring(want)))
			var list []map[string]any
			c.json(&list, "webhook list", "--project", project)
			Expect(list).To(BeEmpty())
		},
		Entry("no --url", "--project and --url are required", "--project", "PROJECT"),
		Entry("not http(s)", "not an absolute http(s) URL", "--project", "PROJECT", "--url", "ftp://hooks.example/x"),
		Entry("a loopback address, private targets not allowed", "private, loopback or link-local", "--project", "PROJECT",
			"--url", "http://127.0.0.1:9/hooks"),
		Entry("localhost, private targets not allowed", "private, loopback or link-local", "--project", "PROJECT",
			"--url", "http://localhost:9/hooks"),
		Entry("an unknown event type", `"message.exploded" is not an event type`, "--project", "PROJECT",
			"--url", "https://hooks.example/x", "--events", "message.sent,message.exploded"),
	)

	It("refuses an endpoint of a project that does not exist", func() {
		_, err := c.run("webhook set", "--project", "prj_01h455vb4pex5vsknk084sn02q", "--url", "https://hooks.example/x")
		Expect(err).To(HaveOccurred())
	})

	It("rotates a secret: the new one is different and the old one stays valid for 24 hours", func() {
		e := set("http://127.0.0.1:9/hooks")
		var r map[string]any
		before := time.Now()
		c.json(&r, "webhook rotate-secret", e["id"].(string))
		Expect(r["secret"]).To(SatisfyAll(HavePrefix("whsec_"), Not(Equal(e["secret"]))))
		until, err := time.Parse(time.RFC3339Nano, r["previous_secret_valid_until"].(string))
		Expect(err).NotTo(HaveOccurred())
		Expect(until).To(BeTemporally("~", before.Add(24*time.Hour), time.Minute))
		_, err = c.run("webhook rotate-secret")
		Expect(err).To(MatchError(ContainSubstring("give one endpoint id")))
	})

	It("disables an endpoint, which then gets no deliveries, and enables it again", func() {
		e := set("http://127.0.0.1:9/hooks")
		id := e["id"].(string)
		var d map[string]any
		c.json(&d, "webhook disable", id)
		Expect(d).To(SatisfyAll(HaveKeyWithValue("enabled", false), HaveKeyWithValue("disabled_reason", "disabled by the operator")))
		event("message.sent")
		Expect(deliveries()).To(BeEmpty())

		c.json(&d, "webhook enable", id)
		Expect(d).To(SatisfyAll(HaveKeyWithValue("enabled", true), HaveKeyWithValue("disabled_reason", BeNil())))
		evt := event("message.sent")
		Expect(deliveries()).To(ConsistOf(SatisfyAll(HaveKeyWithValue("event_id", evt), HaveKeyWithValue("status", "pending"))))
	})

	It("lists deliveries newest first, only the failed ones with --failed, and at most --limit", func() {
		set("http://127.0.0.1:9/hooks", "--events", "message.sent,message.delivered")
		first, second, third := event("message.sent"), event("message.delivered"), event("message.sent")
		event("message.failed") // not subscribed: no delivery
		all := deliveries()
		Expect(all).To(HaveLen(3))
		Expect([]any{all[0]["event_id"], all[1]["event_id"], all[2]["event_id"]}).To(Equal([]any{third, second, first}))
		Expect(all[1]).To(SatisfyAll(HaveKeyWithValue("event_type", "message.delivered"), HaveKeyWithValue("attempts", BeEquivalentTo(0))))
		Expect(deliveries("--limit", "1")).To(ConsistOf(HaveKeyWithValue("event_id", third)))

		Expect(deliveries("--failed")).To(BeEmpty())
		fail(all[2]["id"].(string))
		Expect(deliveries("--failed")).To(ConsistOf(HaveKeyWithValue("event_id", first)))
	})

	It("replays a delivery and an event as new pending deliveries of the same event", func() {
		e := set("http://127.0.0.1:9/hooks")
		set("http://127.0.0.1:9/other", "--events", "message.delivered") // not subscribed to message.sent
		evt := event("message.sent")
		d := deliveries()[0]

		var r map[string]any
		c.json(&r, "webhook replay", d["id"].(string))
		Expect(r["replayed"]).To(ConsistOf(SatisfyAll(HaveKeyWithValue("event_id", evt), HaveKeyWithValue("endpoint_id", e["id"]),
			HaveKeyWithValue("status", "pending"), HaveKeyWithValue("id", Not(Equal(d["id"]))))))
		c.json(&r, "webhook replay", evt)
		Expect(r["replayed"]).To(ConsistOf(HaveKeyWithValue("endpoint_id", e["id"])), "only the subscribed endpoint")
		Expect(deliveries()).To(HaveLen(3))
		Expect(deliveries()).To(HaveEach(HaveKeyWithValue("event_id", evt)))

		c.json(&r, "webhook disable", e["id"].(string))
		_, err := c.run("webhook replay", d["id"].(string))
		Expect(err).To(MatchError(ContainSubstring("is disabled: enable it before replaying")))
		Expect(deliveries()).To(HaveLen(3))
	})

	It("replays the failed deliveries of events since a time, once per event and endpoint", func() {
		e := set("http://127.0.0.1:9/hooks")
		old := event("message.sent")
		fail(deliveries()[0]["id"].(string))
		cut := time.Now().UTC()
		time.Sleep(5 * time.Millisecond)
		recent := event("message.delivered")
		fail(deliveries()[0]["id"].(string))
		event("message.failed") // delivered fine: not replayed

		var r map[string]any
		c.json(&r, "webhook replay", "--project", project, "--since", cut.Format(time.RFC3339Nano))
		Expect(r["replayed"]).To(ConsistOf(SatisfyAll(HaveKeyWithValue("event_id", recent), HaveKeyWithValue("endpoint_id", e["id"]))))
		c.json(&r, "webhook replay", "--project", project, "--since", "1h")
		Expect(r["replayed"]).To(ConsistOf(HaveKeyWithValue("event_id", old), HaveKeyWithValue("event_id", recent)))
	})

	DescribeTable("refuses a replay it cannot make",
		func(want string, args ...string) {
			_, err := c.run("webhook replay", args...)
			Expect(err).To(MatchError(ContainSubstring(want)))
		},
		Entry("nothing to replay", "give a delivery or event id, or --project and --since"),
		Entry("--since without --project", "give a delivery or event id, or --project and --since", "--since", "1h"),
		Entry("an id and --since", "give a delivery or event id, or --project and --since", "evt_01h455vb4pex5vsknk084sn02q", "--since", "1h"),
		Entry("an id of something else", "neither a delivery", "msg_01h455vb4pex5vsknk084sn02q"),
		Entry("a delivery that does not exist", "not found", "whd_01h455vb4pex5vsknk084sn02q"),
		Entry("a time that is neither RFC 3339 nor a duration", "neither an RFC 3339 time nor a duration", "--project", "prj_01h455vb4pex5vsknk084sn02q", "--since", "yesterday"),
	)
})
