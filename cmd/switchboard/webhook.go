package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

const webhookUsage = `switchboard webhook: a project's webhook endpoints and their deliveries.

  switchboard webhook set --project prj_… --url URL [--events a,b]   add (or update) an endpoint
  switchboard webhook list --project prj_…                           the project's endpoints
  switchboard webhook rotate-secret whe_…      new secret; the old one still signs for 24 h
  switchboard webhook disable|enable whe_…     stop or resume deliveries to an endpoint
  switchboard webhook deliveries --project prj_… [--failed] [--limit N]
  switchboard webhook replay whd_…|evt_…       deliver a delivery's or an event's payload again
  switchboard webhook replay --project prj_… --since TIME
                                               replay the failed deliveries of events since TIME
                                               (RFC 3339, or a duration ago such as 24h)

Each takes --json and the configuration flags of serve. The running server's workers make the
deliveries these commands enqueue.
`

// webhookRun is a webhook subcommand once its flags are parsed.
type webhookRun func(ctx context.Context, wh *service.Webhooks, args []string, o *output) error

// webhookCommand runs a `switchboard webhook` subcommand against the same database and domain as
// serve.
func webhookCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return coreCommand(ctx, "webhook", webhookUsage, args, stdout, stderr, func(sub string, fs *flag.FlagSet) coreRun {
		var run webhookRun
		switch sub {
		case "set":
			run = webhookSet(fs)
		case "list":
			run = webhookList(fs)
		case "rotate-secret":
			run = webhookRotate
		case "disable", "enable":
			run = webhookEnable(sub == "enable")
		case "deliveries":
			run = webhookDeliveries(fs)
		case "replay":
			run = webhookReplay(fs)
		default:
			return nil
		}
		return func(ctx context.Context, core *service.Core, args []string, o *output) error {
			return run(ctx, core.Webhooks, args, o)
		}
	})
}

func webhookSet(fs *flag.FlagSet) webhookRun {
	project := fs.String("project", "", "project id (required)")
	url := fs.String("url", "", "endpoint URL, http(s) (required)")
	events := fs.String("events", "", "comma-separated event types; default: every type")
	return func(ctx context.Context, wh *service.Webhooks, _ []string, o *output) error {
		if *project == "" || *url == "" {
			return errors.New("webhook set: --project and --url are required")
		}
		var types []string
		for _, t := range strings.Split(*events, ",") {
			if t = strings.TrimSpace(t); t != "" {
				types = append(types, t)
			}
		}
		e, err := wh.SetEndpoint(ctx, *project, *url, types)
		if err != nil {
			return err
		}
		v := endpointJSON(e)
		v["secret"] = e.Secret
		return o.print(v, func(w io.Writer) {
			fmt.Fprintf(w, "endpoint %s → %s (%s)\nsigning secret: %s\n", e.ID, e.URL, eventsText(e), e.Secret)
		})
	}
}

func webhookList(fs *flag.FlagSet) webhookRun {
	project := fs.String("project", "", "project id (required)")
	return func(ctx context.Context, wh *service.Webhooks, _ []string, o *output) error {
		if *project == "" {
			return errors.New("webhook list: --project is required")
		}
		es, err := wh.Endpoints(ctx, *project)
		if err != nil {
			return err
		}
		out := make([]map[string]any, 0, len(es))
		for i := range es {
			out = append(out, endpointJSON(&es[i]))
		}
		return o.print(out, func(w io.Writer) {
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tURL\tEVENTS\tENABLED\tFAILING SINCE")
			for i, e := range es {
				failing := "-"
				if e.FailingSince != nil {
					failing = e.FailingSince.Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\n", e.ID, e.URL, eventsText(&es[i]), e.Enabled, failing)
			}
			_ = tw.Flush()
		})
	}
}

func webhookRotate(ctx context.Context, wh *service.Webhooks, args []string, o *output) error {
	if len(args) != 1 {
		return errors.New("webhook rotate-secret: give one endpoint id (whe_…)")
	}
	e, err := wh.RotateSecret(ctx, args[0])
	if err != nil {
		return err
	}
	return o.print(map[string]any{"id": e.ID, "secret": e.Secret, "previous_secret_valid_until": e.PreviousSecretUntil},
		func(w io.Writer) {
			fmt.Fprintf(w, "new signing secret for %s: %s\nthe previous secret also signs until %s\n", e.ID, e.Secret,
				e.PreviousSecretUntil.Format(time.RFC3339))
		})
}

func webhookEnable(enable bool) webhookRun {
	return func(ctx context.Context, wh *service.Webhooks, args []string, o *output) error {
		if len(args) != 1 {
			return errors.New("webhook enable/disable: give one endpoint id (whe_…)")
		}
		e, err := wh.SetEnabled(ctx, args[0], enable)
		if err != nil {
			return err
		}
		return o.print(endpointJSON(e), func(w io.Writer) { fmt.Fprintf(w, "endpoint %s enabled: %v\n", e.ID, e.Enabled) })
	}
}

func webhookDeliveries(fs *flag.FlagSet) webhookRun {
	project := fs.String("project", "", "project id (required)")
	failed := fs.Bool("failed", false, "only deliveries that failed after their last attempt")
	limit := fs.Int("limit", 50, "how many of the most recent deliveries")
	return func(ctx context.Context, wh *service.Webhooks, _ []string, o *output) error {
		if *project == "" {
			return errors.New("webhook deliveries: --project is required")
		}
		ds, err := wh.Deliveries(ctx, *project, *failed, *limit)
		if err != nil {
			return err
		}
		return printDeliveries(o, ds)
	}
}

func webhookReplay(fs *flag.FlagSet) webhookRun {
	project := fs.String("project", "", "with --since: the project whose failed deliveries to replay")
	since := fs.String("since", "", "replay the failed deliveries of events since this time (RFC 3339, or a duration ago such as 24h)")
	return func(ctx context.Context, wh *service.Webhooks, args []string, o *output) error {
		var (
			ds  []store.WebhookDelivery
			err error
		)
		switch {
		case len(args) == 1 && *since == "":
			ds, err = wh.Replay(ctx, args[0])
		case len(args) == 0 && *since != "" && *project != "":
			var t time.Time
			if t, err = parseSince(*since, time.Now()); err == nil {
				ds, err = wh.ReplaySince(ctx, *project, t)
			}
		default:
			return errors.New("webhook replay: give a delivery or event id, or --project and --since")
		}
		if err != nil {
			return err
		}
		return o.print(map[string]any{"replayed": deliveriesJSON(ds)}, func(w io.Writer) {
			fmt.Fprintf(w, "replaying %d deliveries\n", len(ds))
			for _, d := range ds {
				fmt.Fprintf(w, "%s\t%s\t%s → %s\n", d.ID, d.EventType, d.EventID, d.EndpointID)
			}
		})
	}
}

// parseSince reads an RFC 3339 time or a duration before now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since: %q is neither an RFC 3339 time nor a duration such as 24h", s)
}

func endpointJSON(e *store.WebhookEndpoint) map[string]any {
	events := e.EventTypes()
	if events == nil {
		events = []string{}
	}
	return map[string]any{"id": e.ID, "project_id": e.ProjectID, "url": e.URL, "events": events, "enabled": e.Enabled,
		"disabled_reason": e.DisabledReason, "failing_since": e.FailingSince, "previous_secret_valid_until": e.PreviousSecretUntil,
		"created_at": e.CreatedAt}
}

func eventsText(e *store.WebhookEndpoint) string {
	if e.Events == "" {
		return "all events"
	}
	return e.Events
}

func deliveriesJSON(ds []store.WebhookDelivery) []map[string]any {
	out := make([]map[string]any, 0, len(ds))
	for _, d := range ds {
		out = append(out, map[string]any{"id": d.ID, "event_id": d.EventID, "event_type": d.EventType, "endpoint_id": d.EndpointID,
			"status": d.Status, "attempts": d.Attempts, "last_status": d.LastStatus, "last_error": d.LastError,
			"next_attempt_at": d.NextAttemptAt, "delivered_at": d.DeliveredAt, "created_at": d.CreatedAt})
	}
	return out
}

func printDeliveries(o *output, ds []store.WebhookDelivery) error {
	return o.print(deliveriesJSON(ds), func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tEVENT\tTYPE\tENDPOINT\tSTATUS\tATTEMPTS\tLAST ERROR")
		for _, d := range ds {
			last := "-"
			if d.LastError != nil {
				last = *d.LastError
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", d.ID, d.EventID, d.EventType, d.EndpointID, d.Status, d.Attempts, last)
		}
		_ = tw.Flush()
	})
}
