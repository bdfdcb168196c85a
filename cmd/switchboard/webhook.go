package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/service/webhooks"
	"github.com/switchboard/switchboard/store"
)

const webhookLong = `A project's webhook endpoints and their deliveries. The running servers' job workers make
the deliveries these commands enqueue.`

// webhookCommand is `switchboard webhook …`.
func (a *app) webhookCommand() *cobra.Command {
	c := group("webhook", "Webhook endpoints, deliveries and replays",
		a.webhookSet(), a.webhookList(), a.webhookRotate(), a.webhookEnable(false), a.webhookEnable(true),
		a.webhookDeliveries(), a.webhookReplay())
	c.Long = webhookLong
	for _, sub := range c.Commands() {
		a.settings.register(sub.Flags(), scopeDomain)
	}
	return c
}

// withOperator runs fn with the domain's operator operations, the console's too.
func (a *app) withOperator(cmd *cobra.Command, fn func(context.Context, *service.Operator) error) error {
	return a.withCore(cmd, func(ctx context.Context, core *service.Core) error { return fn(ctx, core.Operator) })
}

func (a *app) webhookSet() *cobra.Command {
	var project, endpointURL, events string
	c := &cobra.Command{
		Use:   "set --project prj_… --url URL [--events a,b]",
		Short: "Add an endpoint, or update the project's endpoint of the same URL",
		Long: `Add an endpoint to a project, subscribed to the given event types (default: every type), with
a fresh signing secret (whsec_…, printed here). Setting the same URL again updates its event types
and enables it, keeping its secret.`,
		Example: `  switchboard webhook set --project prj_… --url https://example.com/hooks
  switchboard webhook set --project prj_… --url https://example.com/hooks --events message.delivered,message.failed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if project == "" || endpointURL == "" {
				return errors.New("webhook set: --project and --url are required")
			}
			var types []string
			for _, t := range strings.Split(events, ",") {
				if t = strings.TrimSpace(t); t != "" {
					types = append(types, t)
				}
			}
			return a.withOperator(cmd, func(ctx context.Context, op *service.Operator) error {
				e, err := op.SetWebhook(ctx, a.actor(), project, endpointURL, types)
				if err != nil {
					return lookupError(err, "project", project)
				}
				v := endpointJSON(e)
				v["url"] = e.URL // the operator just gave it
				v["secret"] = e.Secret
				return a.print(v, func(w io.Writer) {
					fmt.Fprintf(w, "endpoint %s → %s (%s)\nsigning secret: %s\n", e.ID, e.URL, eventsText(e), e.Secret)
				})
			})
		},
	}
	c.Flags().StringVar(&project, "project", "", "the project's id (required)")
	c.Flags().StringVar(&endpointURL, "url", "", "the endpoint's http(s) URL (required)")
	c.Flags().StringVar(&events, "events", "", "comma-separated event types; default: every type")
	return c
}

func (a *app) webhookList() *cobra.Command {
	var project string
	c := &cobra.Command{
		Use:     "list --project prj_…",
		Short:   "List a project's endpoints (URL credentials and query values hidden, never a secret)",
		Example: "  switchboard webhook list --project prj_…",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if project == "" {
				return errors.New("webhook list: --project is required")
			}
			return a.withOperator(cmd, func(ctx context.Context, op *service.Operator) error {
				es, err := op.Webhooks(ctx, project)
				if err != nil {
					return err
				}
				out := make([]map[string]any, 0, len(es))
				for i := range es {
					out = append(out, endpointJSON(&es[i]))
				}
				return a.print(out, func(w io.Writer) {
					tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "ID\tURL\tEVENTS\tENABLED\tFAILING SINCE")
					for i, e := range es {
						failing := "-"
						if e.FailingSince != nil {
							failing = e.FailingSince.Format(time.RFC3339)
						}
						fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s\n", e.ID, webhooks.RedactURL(e.URL), eventsText(&es[i]), e.Enabled, failing)
					}
					_ = tw.Flush()
				})
			})
		},
	}
	c.Flags().StringVar(&project, "project", "", "the project's id (required)")
	return c
}

func (a *app) webhookRotate() *cobra.Command {
	return &cobra.Command{
		Use:     "rotate-secret whe_…",
		Short:   "Give an endpoint a new signing secret; the old one also signs for 24 hours",
		Example: "  switchboard webhook rotate-secret whe_01h455vb4pex5vsknk084sn02q",
		Args:    exactlyOne("endpoint id (whe_…)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withOperator(cmd, func(ctx context.Context, op *service.Operator) error {
				e, err := op.RotateWebhookSecret(ctx, a.actor(), "", args[0])
				if err != nil {
					return lookupError(err, "webhook endpoint", args[0])
				}
				return a.print(map[string]any{"id": e.ID, "secret": e.Secret, "previous_secret_valid_until": e.PreviousSecretUntil},
					func(w io.Writer) {
						fmt.Fprintf(w, "new signing secret for %s: %s\nthe previous secret also signs until %s\n", e.ID, e.Secret,
							e.PreviousSecretUntil.Format(time.RFC3339))
					})
			})
		},
	}
}

func (a *app) webhookEnable(enable bool) *cobra.Command {
	verb, short := "disable", "Stop deliveries to an endpoint"
	if enable {
		verb, short = "enable", "Resume deliveries to an endpoint (events from now on)"
	}
	return &cobra.Command{
		Use:     verb + " whe_…",
		Short:   short,
		Example: "  switchboard webhook " + verb + " whe_01h455vb4pex5vsknk084sn02q",
		Args:    exactlyOne("endpoint id (whe_…)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withOperator(cmd, func(ctx context.Context, op *service.Operator) error {
				e, err := op.SetWebhookEnabled(ctx, a.actor(), "", args[0], enable)
				if err != nil {
					return lookupError(err, "webhook endpoint", args[0])
				}
				return a.print(endpointJSON(e), func(w io.Writer) { fmt.Fprintf(w, "endpoint %s enabled: %v\n", e.ID, e.Enabled) })
			})
		},
	}
}

func (a *app) webhookDeliveries() *cobra.Command {
	var project string
	var failed bool
	var limit int
	c := &cobra.Command{
		Use:   "deliveries --project prj_… [--failed] [--limit N]",
		Short: "List a project's deliveries, newest first",
		Example: `  switchboard webhook deliveries --project prj_… --limit 20
  switchboard webhook deliveries --project prj_… --failed    # failed, and still retrying after a failure`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if project == "" {
				return errors.New("webhook deliveries: --project is required")
			}
			return a.withOperator(cmd, func(ctx context.Context, op *service.Operator) error {
				status := ""
				if failed {
					status = service.DeliveriesFailing
				}
				ds, err := op.WebhookDeliveries(ctx, project, status, limit)
				if err != nil {
					return err
				}
				return printDeliveries(a, ds)
			})
		},
	}
	c.Flags().StringVar(&project, "project", "", "the project's id (required)")
	c.Flags().BoolVar(&failed, "failed", false, "only deliveries whose last attempt failed: failed for good, or pending a retry")
	c.Flags().IntVar(&limit, "limit", 50, "how many of the most recent deliveries")
	return c
}

func (a *app) webhookReplay() *cobra.Command {
	var project, since string
	c := &cobra.Command{
		Use:   "replay whd_…|evt_… | --project prj_… --since TIME",
		Short: "Deliver a delivery's or an event's payload again, or every failed delivery since a time",
		Long: `Deliver again, with the same webhook-id and a fresh retry schedule: a delivery (whd_…) to its
endpoint, an event (evt_…) to every enabled endpoint subscribed to its type, or, with --project and
--since, every failed delivery of the project's events since then.`,
		Example: `  switchboard webhook replay whd_01h455vb4pex5vsknk084sn02q
  switchboard webhook replay evt_01h455vb4pex5vsknk084sn02q
  switchboard webhook replay --project prj_… --since 24h
  switchboard webhook replay --project prj_… --since 2026-11-20T00:00:00Z`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !(len(args) == 1 && since == "") && !(len(args) == 0 && since != "" && project != "") {
				return errors.New("webhook replay: give a delivery or event id, or --project and --since")
			}
			var t time.Time
			if since != "" {
				var err error
				if t, err = parseSince(since, time.Now()); err != nil {
					return err
				}
			}
			return a.withOperator(cmd, func(ctx context.Context, op *service.Operator) error {
				var (
					ds  []store.WebhookDelivery
					err error
				)
				if len(args) == 1 {
					ds, err = op.ReplayWebhook(ctx, a.actor(), "", args[0])
					err = lookupError(err, "delivery or event", args[0])
				} else {
					ds, err = op.ReplayWebhooksSince(ctx, a.actor(), project, t)
				}
				if err != nil {
					return err
				}
				return a.print(map[string]any{"replayed": deliveriesJSON(ds)}, func(w io.Writer) {
					fmt.Fprintf(w, "replaying %d deliveries\n", len(ds))
					for _, d := range ds {
						fmt.Fprintf(w, "%s\t%s\t%s → %s\n", d.ID, d.EventType, d.EventID, d.EndpointID)
					}
				})
			})
		},
	}
	c.Flags().StringVar(&project, "project", "", "with --since: the project whose failed deliveries to replay")
	c.Flags().StringVar(&since, "since", "", "replay the failed deliveries of events since this time (RFC 3339, or a duration ago such as 24h)")
	return c
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
	return map[string]any{"id": e.ID, "project_id": e.ProjectID, "url": webhooks.RedactURL(e.URL), "events": events, "enabled": e.Enabled,
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

func printDeliveries(a *app, ds []store.WebhookDelivery) error {
	return a.print(deliveriesJSON(ds), func(w io.Writer) {
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
