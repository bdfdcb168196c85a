package main

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// startTracing makes the process export its spans (a span per request, statement batch,
// carrier call and webhook attempt) over OTLP/HTTP to endpoint, and read and write W3C trace
// context; stop flushes what is buffered and turns tracing off again.
func startTracing(ctx context.Context, endpoint, instance string) (stop func(), err error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces" // OTLP/HTTP's path for traces
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u.String()))
	if err != nil {
		return nil, fmt.Errorf("SWITCHBOARD_OTLP_ENDPOINT / --otlp-endpoint: %w", err)
	}
	build := currentBuild()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(2*time.Second)),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "switchboard"),
			attribute.String("service.version", build.Version), attribute.String("service.instance.id", instance))))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tp.Shutdown(sctx)
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	}, nil
}
