package service

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Kinds of carrier submission errors, the label of switchboard_carrier_submit_errors_total.
const (
	submitRefused   = "refused"   // the carrier refused the message for good: it failed
	submitTemporary = "temporary" // the submission failed and is tried again
)

// carrierMetrics is what the dispatch workers count of the carriers, for /metrics.
type carrierMetrics struct {
	submit *prometheus.HistogramVec
	errors *prometheus.CounterVec
}

func newCarrierMetrics() *carrierMetrics {
	return &carrierMetrics{
		submit: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "switchboard_carrier_submit_duration_seconds",
			Help:    "Time a carrier adapter took to answer a message submission, by adapter.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"carrier"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_carrier_submit_errors_total",
			Help: "Message submissions that failed, by adapter and kind: refused (the message failed) or temporary (tried again).",
		}, []string{"carrier", "kind"}),
	}
}

// Collectors are the dispatch workers' metrics and the sizes and times of the sends' batches, for the
// server's metrics registry.
func (m *Messages) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.metrics.submit, m.metrics.errors, m.sendBatchSizes, m.sendBatchTimes}
}

// observeSubmit counts one submission to carrier that took took; kind is empty on success.
func (c *carrierMetrics) observeSubmit(carrier string, took time.Duration, kind string) {
	c.submit.WithLabelValues(carrier).Observe(took.Seconds())
	if kind != "" {
		c.errors.WithLabelValues(carrier, kind).Inc()
	}
}
