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
	"github.com/switchboard/switchboard/store"
)

// projectCommand is `switchboard project create|list|lock|unlock`.
func (a *app) projectCommand() *cobra.Command {
	var name string
	create := &cobra.Command{
		Use:     "create --name NAME",
		Short:   "Create a project (a tenant with its own keys, accounts and webhooks)",
		Example: "  switchboard project create --name \"Acme Holdings\"\n  switchboard project create --name Acme --json   # {\"id\":\"prj_…\",…}",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(name) == "" {
				return errors.New("project create: --name is required")
			}
			return a.withCore(cmd, func(ctx context.Context, core *service.Core) error {
				p, err := core.Operator.CreateProject(ctx, a.actor(), name)
				if err != nil {
					return err
				}
				return a.print(projectJSON(p), func(w io.Writer) { fmt.Fprintf(w, "created project %s (%s)\n", p.ID, p.Name) })
			})
		},
	}
	create.Flags().StringVar(&name, "name", "", "the project's name (required)")

	list := &cobra.Command{
		Use:     "list",
		Short:   "List projects, newest first",
		Example: "  switchboard project list\n  switchboard project list --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withCore(cmd, func(ctx context.Context, core *service.Core) error {
				ps, err := core.Operator.Projects(ctx)
				if err != nil {
					return err
				}
				out := make([]map[string]any, 0, len(ps))
				for i := range ps {
					out = append(out, projectJSON(&ps[i]))
				}
				return a.print(out, func(w io.Writer) {
					tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "ID\tNAME\tLOCKED\tCREATED")
					for _, p := range ps {
						fmt.Fprintf(tw, "%s\t%s\t%v\t%s\n", p.ID, p.Name, p.LockedAt != nil, p.CreatedAt.Format(time.RFC3339))
					}
					_ = tw.Flush()
				})
			})
		},
	}

	lock := func(locked bool) *cobra.Command {
		verb, effect := "unlock", "its keys work again"
		if locked {
			verb, effect = "lock", "its keys get 403 platform_locked until it is unlocked"
		}
		return &cobra.Command{
			Use:     verb + " prj_…",
			Short:   strings.ToUpper(verb[:1]) + verb[1:] + " a project: " + effect,
			Example: "  switchboard project " + verb + " prj_01jtp4dsdq6de56aa0tfm2e5b3",
			Args:    exactlyOne("project id"),
			RunE: func(cmd *cobra.Command, args []string) error {
				return a.withCore(cmd, func(ctx context.Context, core *service.Core) error {
					p, err := core.Operator.SetProjectLocked(ctx, a.actor(), args[0], locked)
					if err != nil {
						return lookupError(err, "project", args[0])
					}
					return a.print(projectJSON(p), func(w io.Writer) {
						fmt.Fprintf(w, "project %s locked: %v\n", p.ID, p.LockedAt != nil)
					})
				})
			},
		}
	}
	return a.domainGroup(group("project", "Create, list, lock and unlock projects", create, list, lock(true), lock(false)))
}

// domainGroup registers the domain's settings on a group's commands, which act through the
// domain's operator operations (service.Operator), as the console does.
func (a *app) domainGroup(c *cobra.Command) *cobra.Command {
	for _, sub := range c.Commands() {
		a.settings.register(sub.Flags(), scopeDomain)
	}
	return c
}

func projectJSON(p *store.Project) map[string]any {
	return map[string]any{"id": p.ID, "name": p.Name, "locked": p.LockedAt != nil, "created_at": p.CreatedAt}
}

// keyCommand is `switchboard key create|list|revoke`.
func (a *app) keyCommand() *cobra.Command {
	var project string
	var demo bool
	create := &cobra.Command{
		Use:   "create --project prj_… [--demo]",
		Short: "Create an API key for a project; its secret is shown once",
		Long: `Create an API key for a project. Live keys (sk_live_…) use the whole API; demo keys
(sk_demo_…) may only send through the shared demo number. The secret is printed once: only its
SHA-256 is stored.`,
		Example: "  switchboard key create --project prj_…\n  switchboard key create --project prj_… --demo --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if project == "" {
				return errors.New("key create: --project is required")
			}
			return a.withCore(cmd, func(ctx context.Context, core *service.Core) error {
				k, secret, err := core.Operator.CreateKey(ctx, a.actor(), project, demo)
				if err != nil {
					return lookupError(err, "project", project)
				}
				return a.print(map[string]any{"id": k.ID, "key": secret, "project_id": k.ProjectID, "kind": k.Kind},
					func(w io.Writer) {
						fmt.Fprintf(w, "created %s key %s for %s\n%s\n(shown once: store it now)\n", k.Kind, k.ID, k.ProjectID, secret)
					})
			})
		},
	}
	create.Flags().StringVar(&project, "project", "", "the project's id (required)")
	create.Flags().BoolVar(&demo, "demo", false, "create a demo key (sk_demo_) instead of a live one")

	var listProject string
	list := &cobra.Command{
		Use:     "list --project prj_…",
		Short:   "List a project's keys with a hint of each secret (never the secret)",
		Example: "  switchboard key list --project prj_…",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if listProject == "" {
				return errors.New("key list: --project is required")
			}
			return a.withCore(cmd, func(ctx context.Context, core *service.Core) error {
				ks, err := core.Operator.Keys(ctx, listProject)
				if err != nil {
					return lookupError(err, "project", listProject)
				}
				out := make([]map[string]any, 0, len(ks))
				for _, k := range ks {
					out = append(out, map[string]any{"id": k.ID, "project_id": k.ProjectID, "kind": k.Kind, "hint": k.Hint,
						"created_at": k.CreatedAt, "last_used_at": k.LastUsedAt, "revoked_at": k.RevokedAt})
				}
				return a.print(out, func(w io.Writer) {
					tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "ID\tKIND\tHINT\tCREATED\tREVOKED")
					for _, k := range ks {
						revoked := "-"
						if k.RevokedAt != nil {
							revoked = k.RevokedAt.Format(time.RFC3339)
						}
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.ID, k.Kind, k.Hint, k.CreatedAt.Format(time.RFC3339), revoked)
					}
					_ = tw.Flush()
				})
			})
		},
	}
	list.Flags().StringVar(&listProject, "project", "", "the project's id (required)")

	revoke := &cobra.Command{
		Use:     "revoke key_…",
		Short:   "Revoke an API key: it stops authenticating at once",
		Example: "  switchboard key revoke key_01jtp4dsdq6de56aa0tfm2e5b3",
		Args:    exactlyOne("key id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withCore(cmd, func(ctx context.Context, core *service.Core) error {
				k, err := core.Operator.RevokeKey(ctx, a.actor(), "", args[0])
				if err != nil {
					return lookupError(err, "API key", args[0])
				}
				return a.print(map[string]any{"id": k.ID, "revoked_at": k.RevokedAt}, func(w io.Writer) {
					fmt.Fprintf(w, "revoked %s\n", k.ID)
				})
			})
		},
	}
	return a.domainGroup(group("key", "Create, list and revoke API keys", create, list, revoke))
}

// logsCommand is `switchboard logs --project prj_…`.
func (a *app) logsCommand() *cobra.Command {
	var project string
	var limit int
	c := &cobra.Command{
		Use:   "logs --project prj_… [--limit N]",
		Short: "Show a project's API request log, newest first",
		Long: `Show a project's API request log, newest first: time, method, path, status, duration,
API key and request id of every authenticated request (kept for --retention-api-logs).`,
		Example: "  switchboard logs --project prj_… --limit 20\n  switchboard logs --project prj_… --json | jq '.[] | select(.status >= 500)'",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if project == "" {
				return errors.New("logs: --project is required")
			}
			return a.withCore(cmd, func(ctx context.Context, core *service.Core) error {
				logs, err := recentLogs(ctx, core.Operator, project, limit)
				if err != nil {
					return err
				}
				out := make([]map[string]any, 0, len(logs))
				for _, l := range logs {
					out = append(out, map[string]any{"time": l.CreatedAt, "method": l.Method, "path": l.Path, "status": l.Status,
						"duration_ms": float64(l.DurationMicros) / 1000, "key_id": l.KeyID, "request_id": l.RequestID})
				}
				return a.print(out, func(w io.Writer) {
					tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "TIME\tMETHOD\tPATH\tSTATUS\tDURATION\tKEY\tREQUEST")
					for _, l := range logs {
						fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1fms\t%s\t%s\n", l.CreatedAt.Format(time.RFC3339), l.Method, l.Path,
							l.Status, float64(l.DurationMicros)/1000, l.KeyID, l.RequestID)
					}
					_ = tw.Flush()
				})
			})
		},
	}
	c.Flags().StringVar(&project, "project", "", "the project's id (required)")
	c.Flags().IntVar(&limit, "limit", 50, "how many of the most recent requests")
	a.settings.register(c.Flags(), scopeDomain)
	return c
}

// recentLogs pages through a project's API log, newest first, until it has limit requests.
func recentLogs(ctx context.Context, op *service.Operator, project string, limit int) ([]store.APILog, error) {
	out := []store.APILog{}
	page := store.Page{Limit: 100}
	for len(out) < limit {
		logs, cur, err := op.APILogs(ctx, project, service.APILogQuery{}, page)
		if err != nil {
			return nil, err
		}
		out = append(out, logs...)
		if cur.Next == nil {
			break
		}
		page.After = *cur.Next
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
