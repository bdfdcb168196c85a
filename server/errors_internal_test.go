package server

import (
	"context"
	"database/sql/driver"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/labstack/echo/v4"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

var _ = Describe("handleError", func() {
	// answer is the status handleError gives err for a request whose client went away (gone) or not.
	answer := func(err error, gone bool) int {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if gone {
			cancel()
		}
		s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		rec := httptest.NewRecorder()
		s.handleError(err, echo.New().NewContext(httptest.NewRequest(http.MethodPost, "/accounts", nil).WithContext(ctx), rec))
		return rec.Code
	}
	// refused is what a transaction's statement meets when its request's context is done: pgx's
	// database/sql driver answers driver.ErrBadConn, which the store reads as unavailability.
	refused := fmt.Errorf("store: create contact: %w: %w", store.ErrUnavailable, driver.ErrBadConn)

	It("answers 499 to a client that went away, whether its statement met the cancellation or a refused connection", func() {
		Expect(answer(fmt.Errorf("store: get account: %w", context.Canceled), true)).To(Equal(statusClientClosed))
		Expect(answer(refused, true)).To(Equal(statusClientClosed))
	})

	It("answers 503 to a refused connection of a client still there", func() {
		Expect(answer(refused, false)).To(Equal(http.StatusServiceUnavailable))
	})
})
