package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

// endpointJSON is a webhook endpoint as the console lists it: its secret only where asked for.
type endpointJSON struct {
	ID  string `json:"id"`
	URL string `json:"url"`
	// Events are the subscribed types; empty means every type.
	Events                   []string   `json:"events"`
	Enabled                  bool       `json:"enabled"`
	DisabledReason           *string    `json:"disabled_reason"`
	FailingSince             *time.Time `json:"failing_since"`
	PreviousSecretValidUntil *time.Time `json:"previous_secret_valid_until"`
	CreatedAt                time.Time  `json:"created_at"`
	Secret                   string     `json:"secret,omitempty"`
}

func endpointOut(e *store.WebhookEndpoint, withSecret bool, now time.Time) endpointJSON {
	events := e.EventTypes()
	if events == nil {
		events = []string{}
	}
	out := endpointJSON{ID: e.ID, URL: e.URL, Events: events, Enabled: e.Enabled, DisabledReason: e.DisabledReason,
		FailingSince: e.FailingSince, CreatedAt: e.CreatedAt}
	if e.PreviousSecretUntil != nil && e.PreviousSecretUntil.After(now) {
		out.PreviousSecretValidUntil = e.PreviousSecretUntil
	}
	if withSecret {
		out.Secret = e.Secret
	}
	return out
}

func (s *Server) consoleWebhooks(c echo.Context, cx *consoleCtx) error {
	es, err := s.console.core.Operator.Webhooks(c.Request().Context(), cx.projectID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct {
		list[endpointJSON]
		EventTypes []string `json:"event_types"`
	}{listJSON(mapSlice(es, func(e *store.WebhookEndpoint) endpointJSON { return endpointOut(e, false, s.now()) }), store.Cursors{}),
		webhooks.EventTypes})
}

// consoleSetWebhook adds an endpoint (or updates the events of the one with this URL); the
// answer carries its signing secret.
func (s *Server) consoleSetWebhook(c echo.Context, cx *consoleCtx) error {
	var body struct {
		URL    string   `json:"url"`
		Events []string `json:"events"`
	}
	if err := bind(c, &body); err != nil {
		return err
	}
	e, err := s.console.core.Operator.SetWebhook(c.Request().Context(), cx.actor, cx.projectID, body.URL, body.Events)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, endpointOut(e, true, s.now()))
}

func (s *Server) consoleWebhookSecret(c echo.Context, cx *consoleCtx) error {
	e, err := s.console.core.Operator.WebhookSecret(c.Request().Context(), cx.actor, cx.projectID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, endpointOut(e, true, s.now()))
}

func (s *Server) consoleEnableWebhook(enabled bool) consoleHandler {
	return func(c echo.Context, cx *consoleCtx) error {
		e, err := s.console.core.Operator.SetWebhookEnabled(c.Request().Context(), cx.actor, cx.projectID, c.Param("id"), enabled)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, endpointOut(e, false, s.now()))
	}
}

// consoleRotateWebhook gives an endpoint a new secret, returned; the old one signs beside it
// until previous_secret_valid_until.
func (s *Server) consoleRotateWebhook(c echo.Context, cx *consoleCtx) error {
	e, err := s.console.core.Operator.RotateWebhookSecret(c.Request().Context(), cx.actor, cx.projectID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, endpointOut(e, true, s.now()))
}

func (s *Server) consoleTestWebhook(c echo.Context, cx *consoleCtx) error {
	var body struct {
		EventType string `json:"event_type"`
	}
	if err := bind(c, &body); err != nil {
		return err
	}
	d, err := s.console.core.Operator.SendTestWebhook(c.Request().Context(), cx.actor, cx.projectID, c.Param("id"), body.EventType)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, deliveryOut(d))
}

// deliveryJSON is a delivery of an event to an endpoint. last_error holds the start of the
// endpoint's answer to a failed attempt: text to show as text, never as HTML.
type deliveryJSON struct {
	ID            string     `json:"id"`
	EndpointID    string     `json:"endpoint_id"`
	EventID       string     `json:"event_id"`
	EventType     string     `json:"event_type"`
	Status        string     `json:"status"`
	Attempts      int        `json:"attempts"`
	LastStatus    *int       `json:"last_status"`
	LastError     *string    `json:"last_error"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	DeliveredAt   *time.Time `json:"delivered_at"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

func deliveryOut(d *store.WebhookDelivery) deliveryJSON {
	return deliveryJSON{ID: d.ID, EndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType, Status: d.Status,
		Attempts: d.Attempts, LastStatus: d.LastStatus, LastError: d.LastError, NextAttemptAt: d.NextAttemptAt,
		DeliveredAt: d.DeliveredAt, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt}
}

// consoleDeliveries lists the project's most recent deliveries: ?status=pending|succeeded|failed,
// ?limit= up to 200 (default 50).
func (s *Server) consoleDeliveries(c echo.Context, cx *consoleCtx) error {
	limit := 50
	if l := c.QueryParam("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 200 {
			return service.Invalid("limit", "must be an integer from 1 to 200")
		}
		limit = n
	}
	ds, err := s.console.core.Operator.WebhookDeliveries(c.Request().Context(), cx.projectID, c.QueryParam("status"), limit)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, listJSON(mapSlice(ds, deliveryOut), store.Cursors{}))
}

// consoleDelivery is one delivery with its endpoint's URL and the exact body it delivers.
func (s *Server) consoleDelivery(c echo.Context, cx *consoleCtx) error {
	w, err := s.console.core.Operator.WebhookDelivery(c.Request().Context(), cx.projectID, c.Param("id"))
	if err != nil {
		return err
	}
	body, err := webhooks.Body(&w.Event)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, struct {
		deliveryJSON
		EndpointURL string `json:"endpoint_url"`
		Payload     string `json:"payload"`
	}{deliveryOut(&w.Delivery), w.Endpoint.URL, string(body)})
}

func (s *Server) consoleReplayDelivery(c echo.Context, cx *consoleCtx) error {
	ds, err := s.console.core.Operator.ReplayWebhook(c.Request().Context(), cx.actor, cx.projectID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, listJSON(mapSlice(ds, deliveryOut), store.Cursors{}))
}

// consoleReplaySince replays the failed deliveries of events since a time: {"since": RFC 3339}.
func (s *Server) consoleReplaySince(c echo.Context, cx *consoleCtx) error {
	var body struct {
		Since string `json:"since"`
	}
	if err := bind(c, &body); err != nil {
		return err
	}
	since, err := time.Parse(time.RFC3339, body.Since)
	if err != nil {
		return service.Invalid("since", "is not an RFC 3339 date-time")
	}
	ds, err := s.console.core.Operator.ReplayWebhooksSince(c.Request().Context(), cx.actor, cx.projectID, since)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, listJSON(mapSlice(ds, deliveryOut), store.Cursors{}))
}
