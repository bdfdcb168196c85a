package server

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// apiLogJSON is one authenticated request of the API log.
type apiLogJSON struct {
	ID         string    `json:"id"`
	RequestID  string    `json:"request_id"`
	KeyID      string    `json:"key_id"`
	Method     string    `json:"method"`
	Path       string    `json:"path"`
	Query      string    `json:"query"`
	Status     int       `json:"status"`
	ErrorType  string    `json:"error_type"`
	DurationMS float64   `json:"duration_ms"`
	IP         string    `json:"ip"`
	UserAgent  string    `json:"user_agent"`
	CreatedAt  time.Time `json:"created_at"`
}

func apiLogOut(l *store.APILog) apiLogJSON {
	return apiLogJSON{ID: strconv.FormatInt(l.ID, 10), RequestID: l.RequestID, KeyID: l.KeyID, Method: l.Method, Path: l.Path,
		Query: l.Query, Status: l.Status, ErrorType: l.ErrorType, DurationMS: float64(l.DurationMicros) / 1000, IP: l.IP,
		UserAgent: l.UserAgent, CreatedAt: l.CreatedAt}
}

// consoleLogs pages through the project's API log, newest first: ?status= (404 or 4xx),
// ?path= (contained), ?method=, ?key_id=, ?from= and ?to= (RFC 3339), and the list cursors.
func (s *Server) consoleLogs(c echo.Context, cx *consoleCtx) error {
	p, err := pageOf(c)
	if err != nil {
		return err
	}
	q := service.APILogQuery{Status: c.QueryParam("status"), Path: c.QueryParam("path"), Method: c.QueryParam("method"),
		KeyID: c.QueryParam("key_id")}
	for _, t := range []struct {
		name string
		dst  **time.Time
	}{{"from", &q.From}, {"to", &q.To}} {
		if v := c.QueryParam(t.name); v != "" {
			at, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return service.Invalid(t.name, "is not an RFC 3339 date-time")
			}
			*t.dst = &at
		}
	}
	// Logs are written a moment after their request; a listing shows everything answered so far.
	s.FlushLogs()
	logs, cur, err := s.console.core.Operator.APILogs(c.Request().Context(), cx.projectID, q, p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, listJSON(mapSlice(logs, apiLogOut), cur))
}

func (s *Server) consoleLog(c echo.Context, cx *consoleCtx) error {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return &service.Error{Type: service.TypeNotFound, Message: "No such request in the API log."}
	}
	l, err := s.console.core.Operator.APILog(c.Request().Context(), cx.projectID, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, apiLogOut(l))
}

// consoleUsage reports the project's usage per account and day: ?from= and ?to= (YYYY-MM-DD,
// both included; default the last 30 days), ?account_id=; ?format=csv downloads it as CSV.
func (s *Server) consoleUsage(c echo.Context, cx *consoleCtx) error {
	var q service.UsageQuery
	q.AccountID = c.QueryParam("account_id")
	for _, d := range []struct {
		name string
		dst  *time.Time
	}{{"from", &q.From}, {"to", &q.To}} {
		if v := c.QueryParam(d.name); v != "" {
			t, err := time.Parse(time.DateOnly, v)
			if err != nil {
				return service.Invalid(d.name, "is not a date (YYYY-MM-DD)")
			}
			*d.dst = t
		}
	}
	r, err := s.console.core.Usage.Report(c.Request().Context(), cx.projectID, q)
	if err != nil {
		return err
	}
	if c.QueryParam("format") == "csv" {
		var buf bytes.Buffer
		if err := service.WriteUsageCSV(&buf, r); err != nil {
			return err
		}
		name := "usage-" + r.From.Format(time.DateOnly) + "-" + r.To.Format(time.DateOnly) + ".csv"
		c.Response().Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		return c.Blob(http.StatusOK, "text/csv; charset=utf-8", buf.Bytes())
	}
	out, err := usageOut(r)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// consoleSimVerdict decides a review the simulated carrier holds, as its registry would:
// {"id": "cpn_…"|"tfc_…", "verdict": "approve"|"reject", "reason": "…"}; see
// service.Operator.SimVerdict.
func (s *Server) consoleSimVerdict(c echo.Context, cx *consoleCtx) error {
	var body struct {
		ID      string `json:"id"`
		Verdict string `json:"verdict"`
		Reason  string `json:"reason"`
	}
	if err := bind(c, &body); err != nil {
		return err
	}
	if body.Verdict != "approve" && body.Verdict != "reject" {
		return service.Invalid("verdict", "must be approve or reject")
	}
	before, after, err := s.console.core.Operator.SimVerdict(c.Request().Context(), cx.actor, cx.projectID, body.ID,
		body.Verdict == "approve", body.Reason)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"id": body.ID, "status": after, "previous_status": before, "changed": after != before})
}
