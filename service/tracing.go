package service

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

// tracer makes the domain's spans (carrier calls, webhook attempts) with the process's current
// provider, a no-op unless tracing is on. It is looked up at each use: a tracer kept from before
// the provider was set would stay with the first one ever set.
func tracer() trace.Tracer { return otel.Tracer("github.com/switchboard/switchboard/service") }
