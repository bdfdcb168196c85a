package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/gen/client"
)

// The Go client that oapi-codegen (the version go.mod pins) generates from openapi.yaml, as a user
// of the contract would: it compiles with the suite, and these specs use it against the real
// server over TLS. The TypeScript client's spec is in client_ts_test.go.
var _ = Describe("A Go client generated from openapi.yaml", func() {
	It("sends a message, reads a page of messages and decodes a webhook of the real server", func(ctx SpecContext) {
		t, acct, _, number := newSendingAccount()
		srv := httptest.NewTLSServer(t.api)
		DeferCleanup(srv.Close)
		c, err := client.NewClientWithResponses(srv.URL, client.WithHTTPClient(srv.Client()),
			client.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
				req.Header.Set("Authorization", "Bearer "+t.Key)
				return nil
			}))
		Expect(err).NotTo(HaveOccurred())
		hooks := newReceiver(func(int) int { return http.StatusNoContent })
		t.subscribe(hooks.URL(), "message.delivered")

		to, from, body := newHandset(), number, "Your car is ready for pickup."
		sent, err := c.SendMessageWithResponse(ctx, acct, nil, client.SendMessageJSONRequestBody{To: &to, From: &from, Body: &body})
		Expect(err).NotTo(HaveOccurred())
		Expect(sent.StatusCode()).To(Equal(http.StatusCreated), string(sent.Body))
		Expect(sent.JSON201).NotTo(BeNil())
		Expect(*sent.JSON201.Body).To(Equal(body))
		Expect(sent.JSON201.Conversation.Contact.PhoneNumber).To(Equal(to))
		Expect(sent.HTTPResponse.Header.Get("X-Request-Id")).NotTo(BeEmpty())

		limit := 1
		page, err := c.ListMessagesWithResponse(ctx, acct, &client.ListMessagesParams{Limit: &limit})
		Expect(err).NotTo(HaveOccurred())
		Expect(page.StatusCode()).To(Equal(http.StatusOK), string(page.Body))
		Expect(page.JSON200.Data).To(HaveLen(1))
		Expect(page.JSON200.Data[0].Id).To(Equal(sent.JSON201.Id))
		Expect(page.JSON200.Pagination.PreviousCursor).To(BeNil())

		var delivery []byte
		Eventually(func() []received { return hooks.ofType("message.delivered") }).WithTimeout(20 * time.Second).
			Should(HaveLen(1))
		delivery = hooks.ofType("message.delivered")[0].Body
		var event client.WebhookEvent
		Expect(json.Unmarshal(delivery, &event)).To(Succeed())
		v, err := event.ValueByDiscriminator()
		Expect(err).NotTo(HaveOccurred(), "%s", delivery)
		delivered, ok := v.(client.MessageDeliveredEvent)
		Expect(ok).To(BeTrue(), "a message.delivered event decodes as MessageDeliveredEvent: %T", v)
		Expect(delivered.Data.Id).To(Equal(sent.JSON201.Id))
		Expect(delivered.Data.DeliveredAt).NotTo(BeZero(), "delivered_at is required in the event's data")
		Expect(delivered.AccountId).To(Equal(acct))
	})
})
