package webhooks

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of one webhook attempt, the label of switchboard_webhook_attempts_total.
const (
	attemptSucceeded     = "success"            // a 2xx answer
	attemptHTTPStatus    = "http_status"        // any other answer, redirects included
	attemptTimeout       = "timeout"            // no answer within the timeout
	attemptRefused       = "connection_refused" // nothing listens at the endpoint
	attemptRefusedTarget = "refused_target"     // the SSRF guard refused the resolved address
	attemptError         = "error"              // anything else: DNS, TLS, a reset connection
	attemptBreakerOpen   = "breaker_open"       // not sent: the endpoint's breaker is open
)

// webhookMetrics is what the delivery workers count, for /metrics (see Service.Collectors).
type webhookMetrics struct {
	attempts *prometheus.CounterVec
	duration prometheus.Histogram
	lag      prometheus.Histogram
	failed   prometheus.Counter
	disabled prometheus.Counter
	deferred prometheus.Counter
}

func newWebhookMetrics() *webhookMetrics {
	return &webhookMetrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_webhook_attempts_total",
			Help: "Webhook delivery attempts, by outcome: success, http_status, timeout, connection_refused, refused_target, error, or breaker_open (failed without a request).",
		}, []string{"outcome"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "switchboard_webhook_attempt_duration_seconds",
			Help:    "Time from sending a webhook to its endpoint's answer (or to the attempt's failure).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 15},
		}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "switchboard_webhook_delivery_lag_seconds",
			Help: "Time from an event's creation to its delivery's success, retries included.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 36000,
				100000},
		}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchboard_webhook_deliveries_failed_total",
			Help: "Webhook deliveries that failed their last attempt (replayable).",
		}),
		disabled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchboard_webhook_endpoints_disabled_total",
			Help: "Webhook endpoints disabled for failing continuously.",
		}),
		deferred: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchboard_webhook_attempts_deferred_total",
			Help: "Webhook attempts put back in the queue because their endpoint had as many attempts in flight and waiting as it may.",
		}),
	}
}

// Collectors are the delivery workers' metrics, for the server's /metrics registry.
func (w *Service) Collectors() []prometheus.Collector {
	m := w.metrics
	return []prometheus.Collector{m.attempts, m.duration, m.lag, m.failed, m.disabled, m.deferred}
}

// observeAttempt counts one attempt that took took; a success also records the lag since its
// event's creation, in real time (an injected clock only schedules retries).
func (m *webhookMetrics) observeAttempt(outcome string, took time.Duration, eventAt time.Time) {
	m.attempts.WithLabelValues(outcome).Inc()
	m.duration.Observe(took.Seconds())
	if outcome == attemptSucceeded {
		m.lag.Observe(time.Since(eventAt).Seconds())
	}
}
