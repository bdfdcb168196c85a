package server

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/switchboard/switchboard/store"
)

type metrics struct {
	registry       *prometheus.Registry
	requests       *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	apiLogsDropped prometheus.Counter
	// series holds each requestKey's requestSeries, looked up in requests and latency once:
	// WithLabelValues hashes the labels and takes the vector's lock on every call. The map is
	// never changed once stored: a new series stores a copy with it (under seriesMu), so that a
	// request reads it without a lock or boxing its key.
	series   atomic.Pointer[map[requestKey]*requestSeries]
	seriesMu sync.Mutex
}

// requestKey is the labels of a request's series: its operation, method and status.
type requestKey struct {
	op, method string
	status     int
}

// requestSeries are the request counter and latency histogram of one requestKey.
type requestSeries struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

// observeRequest counts a request answered with status and records its latency. Requests of
// no operation ("unknown") go to the vectors directly, and series keeps only the bounded set of
// the operations' (each new series copies the map). A method label is one of HTTP's methods or
// "other": a request's method is whatever token the client sent, and each distinct one would be
// a series of its own, for as long as the process lives.
func (m *metrics) observeRequest(op, method string, status int, elapsed time.Duration) {
	if op == "unknown" {
		method = metricMethod(method)
		m.requests.WithLabelValues(op, method, strconv.Itoa(status)).Inc()
		m.latency.WithLabelValues(op, method).Observe(elapsed.Seconds())
		return
	}
	k := requestKey{op, method, status}
	var rs *requestSeries
	if all := m.series.Load(); all != nil {
		rs = (*all)[k]
	}
	if rs == nil {
		rs = m.addSeries(k)
	}
	rs.count.Inc()
	rs.latency.Observe(elapsed.Seconds())
}

// metricMethod is method as a metric's label: itself when it is one of HTTP's methods, "other"
// otherwise.
func metricMethod(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}

// addSeries returns k's series, storing it with the others if it is new.
func (m *metrics) addSeries(k requestKey) *requestSeries {
	m.seriesMu.Lock()
	defer m.seriesMu.Unlock()
	all := map[requestKey]*requestSeries{}
	if old := m.series.Load(); old != nil {
		if rs := (*old)[k]; rs != nil {
			return rs
		}
		all = maps.Clone(*old)
	}
	rs := &requestSeries{
		count:   m.requests.WithLabelValues(k.op, k.method, strconv.Itoa(k.status)),
		latency: m.latency.WithLabelValues(k.op, k.method),
	}
	all[k] = rs
	m.series.Store(&all)
	return rs
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_http_requests_total",
			Help: "HTTP requests answered, by OpenAPI operation, method and status code.",
		}, []string{"operation", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "switchboard_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by OpenAPI operation and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"operation", "method"}),
		apiLogsDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchboard_api_logs_dropped_total",
			Help: "API request logs dropped because the log writer fell behind.",
		}),
	}
	m.registry.MustRegister(m.requests, m.latency, m.apiLogsDropped,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Metrics serves the Prometheus exposition of the server's, the domain's and the operator's
// metrics. It is not a route of the API: serve mounts it on its own listener
// (SWITCHBOARD_METRICS_LISTEN), so that it is never on the public port.
func (s *Server) Metrics() http.Handler {
	return promhttp.InstrumentMetricHandler(s.metrics.registry, promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{
		Registry: s.metrics.registry, Timeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}))
}

// operatorMetricsWindow is how far back switchboard_messages counts messages.
const operatorMetricsWindow = 24 * time.Hour

// operatorMetricsTTL is how long one read of the operator's figures serves scrapes by default.
const operatorMetricsTTL = 10 * time.Second

// operatorCollector exports the figures an operator pages on, read from the database on scrape
// (at most once per ttl): messages by status and failure reason, each job
// queue's backlog and the age of its oldest job, and each webhook endpoint's pending deliveries.
// They are the installation's: every instance reports the same.
type operatorCollector struct {
	store *store.Store
	log   *slog.Logger
	ttl   time.Duration

	mu    sync.Mutex
	at    time.Time
	stats *store.OperatorStats
	err   error

	messages, queueDepth, queueAge, backlog, backlogAge, up *prometheus.Desc
}

func newOperatorCollector(st *store.Store, log *slog.Logger, ttl time.Duration) *operatorCollector {
	if ttl == 0 {
		ttl = operatorMetricsTTL
	}
	return &operatorCollector{store: st, log: log, ttl: ttl,
		messages: prometheus.NewDesc("switchboard_messages",
			"Messages created in the last 24 hours, by status and failure reason (empty unless failed).",
			[]string{"status", "failure_reason"}, nil),
		queueDepth: prometheus.NewDesc("switchboard_queue_depth",
			"Jobs due and waiting for a worker, by queue (messages: dispatch; webhooks: delivery attempts; default: reports and housekeeping).",
			[]string{"queue"}, nil),
		queueAge: prometheus.NewDesc("switchboard_queue_oldest_seconds",
			"How long the oldest job due in the queue has waited for a worker.", []string{"queue"}, nil),
		backlog: prometheus.NewDesc("switchboard_webhook_backlog",
			"Webhook deliveries pending (first attempt or retries), by endpoint.", []string{"endpoint", "project"}, nil),
		backlogAge: prometheus.NewDesc("switchboard_webhook_backlog_oldest_seconds",
			"Age of the endpoint's oldest pending delivery.", []string{"endpoint", "project"}, nil),
		up: prometheus.NewDesc("switchboard_operator_metrics_up",
			"1 when the database answered the last read of the operator's figures, else 0.", nil, nil),
	}
}

// Describe sends the descriptors of the collector's metrics.
func (c *operatorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.messages, c.queueDepth, c.queueAge, c.backlog, c.backlogAge, c.up} {
		ch <- d
	}
}

// Collect reads the figures (or reuses a recent read) and sends them.
func (c *operatorCollector) Collect(ch chan<- prometheus.Metric) {
	stats, err := c.read()
	if err != nil {
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	for _, m := range stats.Messages {
		ch <- prometheus.MustNewConstMetric(c.messages, prometheus.GaugeValue, float64(m.Count), m.Status, m.FailureReason)
	}
	for _, q := range stats.Queues {
		ch <- prometheus.MustNewConstMetric(c.queueDepth, prometheus.GaugeValue, float64(q.Available), q.Queue)
		ch <- prometheus.MustNewConstMetric(c.queueAge, prometheus.GaugeValue, max(0, q.OldestSeconds), q.Queue)
	}
	for _, w := range stats.Webhooks {
		ch <- prometheus.MustNewConstMetric(c.backlog, prometheus.GaugeValue, float64(w.Pending), w.EndpointID, w.ProjectID)
		ch <- prometheus.MustNewConstMetric(c.backlogAge, prometheus.GaugeValue, max(0, w.OldestSeconds), w.EndpointID, w.ProjectID)
	}
}

func (c *operatorCollector) read() (*store.OperatorStats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.at) < c.ttl {
		return c.stats, c.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c.stats, c.err = c.store.OperatorStats(ctx, time.Now().Add(-operatorMetricsWindow))
	c.at = time.Now()
	if c.err != nil {
		c.log.Warn("read the operator's metrics", "err", c.err)
	}
	return c.stats, c.err
}
