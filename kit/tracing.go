package kit

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// untraced is the global tracer provider the process starts with, which records nothing.
var untraced = otel.GetTracerProvider()

// Traced reports whether the process has a tracer provider of its own (tracing on, which also
// sets the traceparent propagator). Until one is set a span records nothing and carries no trace,
// and the hot paths start none: a span costs a context and the span itself (a request's, a
// webhook attempt's, a carrier submission's).
func Traced() bool { return otel.GetTracerProvider() != untraced }

// traceContext reads and writes W3C trace context; it is used whatever global propagator the
// process has, since a stored traceparent is always in this format.
var traceContext = propagation.TraceContext{}

// Traceparent is the W3C traceparent of ctx's span when it is sampled (tracing is on and this
// trace is recorded), to store with work that continues the trace later; otherwise nil.
func Traceparent(ctx context.Context) *string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsSampled() {
		return nil
	}
	carrier := propagation.MapCarrier{}
	traceContext.Inject(ctx, carrier)
	tp := carrier.Get("traceparent")
	if tp == "" {
		return nil
	}
	return &tp
}

// WithTraceparent returns ctx carrying a stored traceparent as its remote parent, so that the
// spans started from it belong to that trace; a nil or empty traceparent leaves ctx as it is.
func WithTraceparent(ctx context.Context, tp *string) context.Context {
	if tp == nil || *tp == "" {
		return ctx
	}
	return traceContext.Extract(ctx, propagation.MapCarrier{"traceparent": *tp})
}

// InjectTraceparent sets the traceparent header of ctx's span, when it has a valid one, on an
// outgoing request's headers.
func InjectTraceparent(ctx context.Context, header interface{ Set(string, string) }) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	carrier := propagation.MapCarrier{}
	traceContext.Inject(ctx, carrier)
	for k, v := range carrier {
		header.Set(k, v)
	}
}
