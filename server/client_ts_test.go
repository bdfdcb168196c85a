package server_test

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// tsProgram uses the types openapi-typescript generates from openapi.yaml with openapi-fetch, as a
// TypeScript user of the contract would; tsc must accept it under strict settings, and then it runs
// against the real server: a send, a page of messages, and the narrowing of a real webhook
// delivery to its event type by the `type` discriminator.
const tsProgram = `import createClient from "openapi-fetch";
import { readFileSync } from "node:fs";
import type { components, paths } from "./schema.js";

type WebhookEvent = components["schemas"]["WebhookEvent"];
type MessageDelivered = components["schemas"]["MessageDeliveredEvent"];

const args = process.argv.slice(2);
function arg(i: number): string {
  const v = args[i];
  if (v === undefined) throw new Error("missing argument " + i);
  return v;
}
const [base, key, account, from, to, deliveryFile] = [arg(0), arg(1), arg(2), arg(3), arg(4), arg(5)];
const client = createClient<paths>({ baseUrl: base, headers: { Authorization: "Bearer " + key } });

function deliveredAt(e: MessageDelivered): string {
  return e.data.delivered_at;
}

async function main(): Promise<void> {
  const sent = await client.POST("/accounts/{account_id}/messages", {
    params: { path: { account_id: account } },
    body: { to, from, body: "Hi from TypeScript", settings: { link_shortening: "disabled" } },
  });
  if (!sent.data) throw new Error("send: " + JSON.stringify(sent.error));
  const page = await client.GET("/accounts/{account_id}/messages", {
    params: { path: { account_id: account }, query: { limit: 1 } },
  });
  if (!page.data) throw new Error("list: " + JSON.stringify(page.error));
  const event: WebhookEvent = JSON.parse(readFileSync(deliveryFile, "utf8"));
  if (event.type !== "message.delivered") throw new Error("unexpected event " + event.type);
  console.log(JSON.stringify({
    sent: sent.data.id,
    status: sent.data.status,
    listed: page.data.data.map((m) => m.id),
    previous: page.data.pagination.previous_cursor,
    delivered: event.data.id,
    delivered_at: deliveredAt(event),
  }));
}

main().catch((e) => { console.error(e); process.exit(1); });
`

var _ = Describe("A TypeScript client generated from openapi.yaml", func() {
	It("compiles with tsc, sends, reads a page and decodes a webhook of the real server", func(ctx SpecContext) {
		root, err := filepath.Abs("..")
		Expect(err).NotTo(HaveOccurred())
		bin := filepath.Join(root, "node_modules", ".bin")
		if _, err := exec.LookPath("node"); err != nil {
			Skip("SKIPPED: no Node.js on this machine, so the TypeScript client is not checked (the Go client is)")
		}
		for _, tool := range []string{"openapi-typescript", "tsc"} {
			if _, err := os.Stat(filepath.Join(bin, tool)); err != nil {
				Skip("SKIPPED: " + tool + " is not installed: run `npm ci` (make test does it where npm is)")
			}
		}

		// A message to deliver first, for a real webhook delivery to decode.
		t, acct, _, number := newSendingAccount()
		hooks := newReceiver(func(int) int { return http.StatusNoContent })
		t.subscribe(hooks.URL(), "message.delivered")
		first := t.send(acct, map[string]any{"to": newHandset(), "from": number, "body": "First"})
		Eventually(func() []received { return hooks.ofType("message.delivered") }).WithTimeout(20 * time.Second).Should(HaveLen(1))

		dir := GinkgoT().TempDir()
		Expect(os.Symlink(filepath.Join(root, "node_modules"), filepath.Join(dir, "node_modules"))).To(Succeed())
		write := func(name, content string) {
			ExpectWithOffset(1, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600)).To(Succeed())
		}
		write("package.json", `{"type": "module", "private": true}`)
		write("tsconfig.json", `{"compilerOptions": {"target": "es2022", "module": "nodenext", "moduleResolution": "nodenext",
			"strict": true, "noUncheckedIndexedAccess": true, "outDir": "out", "types": ["node"]},
			"files": ["main.ts", "schema.d.ts"]}`)
		write("main.ts", tsProgram)
		write("delivery.json", string(hooks.ofType("message.delivered")[0].Body))
		run := func(name string, args ...string) string {
			cmd := exec.CommandContext(ctx, name, args...)
			cmd.Dir = dir
			if name == "node" {
				cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+filepath.Join(dir, "ca.pem"))
			}
			out, err := cmd.CombinedOutput()
			ExpectWithOffset(1, err).NotTo(HaveOccurred(), "%s %v:\n%s", name, args, out)
			return string(out)
		}
		run(filepath.Join(bin, "openapi-typescript"), filepath.Join(root, "openapi.yaml"), "-o", "schema.d.ts")
		run(filepath.Join(bin, "tsc"), "-p", ".")
		Expect(os.Rename(filepath.Join(dir, "schema.d.ts"), filepath.Join(dir, "out", "schema.d.ts"))).To(Succeed())

		srv := httptest.NewTLSServer(t.api)
		DeferCleanup(srv.Close)
		write("ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
		out := run("node", filepath.Join("out", "main.js"), srv.URL, t.Key, acct, number, newHandset(), filepath.Join(dir, "delivery.json"))
		var got struct {
			Sent        string   `json:"sent"`
			Status      string   `json:"status"`
			Listed      []string `json:"listed"`
			Previous    *string  `json:"previous"`
			Delivered   string   `json:"delivered"`
			DeliveredAt string   `json:"delivered_at"`
		}
		Expect(json.Unmarshal([]byte(out), &got)).To(Succeed(), out)
		Expect(got.Sent).To(MatchRegexp(`^msg_`))
		Expect(got.Status).To(Equal("queued"))
		Expect(got.Listed).To(Equal([]string{got.Sent}), "the newest message first, one per page")
		Expect(got.Previous).To(BeNil())
		Expect(got.Delivered).To(Equal(first["id"]))
		Expect(got.DeliveredAt).NotTo(BeEmpty())
	})
})
