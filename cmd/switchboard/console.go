package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// actor is who the command line acts as in the audit log: the operating-system user and host.
func (a *app) actor() service.Actor {
	who := "unknown"
	if u, err := user.Current(); err == nil {
		who = u.Username
	}
	if h, err := os.Hostname(); err == nil {
		who += "@" + h
	}
	return service.CLIActor(who)
}

const consoleLong = `The operator console's users: people who sign in to https://<listen>/console/ with an email
and a password, with a role on each project (owner: everything, including members; developer:
keys, webhooks, numbers and accounts; viewer: reads only). Owners add members in the console;
these commands bootstrap the first one and rescue a locked-out operator.`

// consoleCommand is `switchboard console user create|list|reset-password`.
func (a *app) consoleCommand() *cobra.Command {
	userCmd := group("user", "Create, list and reset the console's users", a.consoleUserCreate(), a.consoleUserList(),
		a.consoleUserReset())
	c := group("console", "The operator console's users", userCmd)
	c.Long = consoleLong
	for _, sub := range userCmd.Commands() {
		a.settings.register(sub.Flags(), scopeDomain)
	}
	return c
}

func (a *app) consoleUserCreate() *cobra.Command {
	var email, project, role string
	c := &cobra.Command{
		Use:   "create --email EMAIL --project prj_… --role owner|developer|viewer",
		Short: "Give a person a role on a project; a new email gets a one-time password, shown once",
		Long: `Give the person with this email a role on a project. A new email becomes a console user with
a one-time password, printed here (only its hash is stored): they choose their own at their first
sign-in. An existing user keeps their password and gets the role.`,
		Example: `  switchboard console user create --email ops@acme.example --project prj_… --role owner
  switchboard console user create --email dev@acme.example --project prj_… --role developer --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if email == "" || project == "" {
				return errors.New("console user create: --email and --project are required")
			}
			return a.withCore(cmd, func(ctx context.Context, core *service.Core) error {
				m, password, err := core.Console.AddMember(ctx, a.actor(), project, email, role)
				if err != nil {
					return lookupError(err, "project", project)
				}
				out := map[string]any{"user_id": m.UserID, "email": m.Email, "project_id": project, "role": m.Role,
					"one_time_password": nil}
				if password != "" {
					out["one_time_password"] = password
				}
				return a.print(out, func(w io.Writer) {
					fmt.Fprintf(w, "%s is %s of %s\n", m.Email, m.Role, project)
					if password != "" {
						fmt.Fprintf(w, "one-time password: %s\n(shown once: they choose their own at the first sign-in)\n", password)
					}
				})
			})
		},
	}
	c.Flags().StringVar(&email, "email", "", "the person's email (required)")
	c.Flags().StringVar(&project, "project", "", "the project's id (required)")
	c.Flags().StringVar(&role, "role", store.RoleOwner, "owner, developer or viewer")
	return c
}

func (a *app) consoleUserList() *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List the console's users and their projects",
		Example: "  switchboard console user list --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withCore(cmd, func(ctx context.Context, core *service.Core) error {
				us, err := core.Console.Users(ctx)
				if err != nil {
					return err
				}
				out := make([]map[string]any, 0, len(us))
				roles := map[string]string{}
				for _, u := range us {
					ms, err := core.Console.Memberships(ctx, u.ID)
					if err != nil {
						return err
					}
					projects := map[string]string{}
					text := ""
					for _, m := range ms {
						projects[m.ProjectID] = m.Role
						text += fmt.Sprintf("%s:%s ", m.ProjectID, m.Role)
					}
					roles[u.ID] = text
					out = append(out, map[string]any{"id": u.ID, "email": u.Email, "totp": u.TOTPEnabledAt != nil,
						"locked_until": u.LockedUntil, "last_login_at": u.LastLoginAt, "projects": projects})
				}
				return a.print(out, func(w io.Writer) {
					tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "ID\tEMAIL\tTOTP\tLAST SIGN-IN\tPROJECTS")
					for _, u := range us {
						last := "never"
						if u.LastLoginAt != nil {
							last = u.LastLoginAt.Format(time.RFC3339)
						}
						fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\n", u.ID, u.Email, u.TOTPEnabledAt != nil, last, roles[u.ID])
					}
					_ = tw.Flush()
				})
			})
		},
	}
}

func (a *app) consoleUserReset() *cobra.Command {
	var email string
	c := &cobra.Command{
		Use:     "reset-password --email EMAIL",
		Short:   "Give a user a new one-time password, unlock them and sign them out everywhere",
		Example: `  switchboard console user reset-password --email ops@acme.example`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if email == "" {
				return errors.New("console user reset-password: --email is required")
			}
			return a.withCore(cmd, func(ctx context.Context, core *service.Core) error {
				password, err := core.Console.ResetPassword(ctx, a.actor(), email)
				if err != nil {
					return lookupError(err, "console user", email)
				}
				return a.print(map[string]any{"email": service.NormalizeEmail(email), "one_time_password": password}, func(w io.Writer) {
					fmt.Fprintf(w, "one-time password of %s: %s\n(shown once: they choose their own at the next sign-in)\n",
						service.NormalizeEmail(email), password)
				})
			})
		},
	}
	c.Flags().StringVar(&email, "email", "", "the user's email (required)")
	return c
}

// usageCommand is `switchboard usage --project prj_…`: the report of GET /usage and the console.
func (a *app) usageCommand() *cobra.Command {
	var project, account, from, to string
	var asCSV bool
	c := &cobra.Command{
		Use:   "usage --project prj_… [--from DATE] [--to DATE] [--account acct_…] [--csv]",
		Short: "A project's billable usage per account and day: SMS and segments, MMS, voice minutes, verifications",
		Long: `A project's billable usage per account and day (UTC): SMS submitted and received with their
segments (the 140-byte billing unit), MMS, voice minutes (each call rounded up) and verifications.
The same report as GET /usage and the console's Usage page. Dates are YYYY-MM-DD, both included;
the default is the 30 days that end today.`,
		Example: `  switchboard usage --project prj_…
  switchboard usage --project prj_… --from 2026-11-01 --to 2026-11-30 --csv > november.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if project == "" {
				return errors.New("usage: --project is required")
			}
			q := service.UsageQuery{AccountID: account}
			for _, d := range []struct {
				flag, value string
				dst         *time.Time
			}{{"--from", from, &q.From}, {"--to", to, &q.To}} {
				if d.value == "" {
					continue
				}
				t, err := time.Parse(time.DateOnly, d.value)
				if err != nil {
					return fmt.Errorf("usage: %s %q is not a date (YYYY-MM-DD)", d.flag, d.value)
				}
				*d.dst = t
			}
			return a.withCore(cmd, func(ctx context.Context, core *service.Core) error {
				r, err := core.Usage.Report(ctx, project, q)
				if err != nil {
					return lookupError(err, "account", account)
				}
				if asCSV {
					return service.WriteUsageCSV(a.stdout, r)
				}
				days := make([]map[string]any, len(r.Days))
				for i, d := range r.Days {
					days[i] = map[string]any{"date": d.Day, "account_id": d.AccountID, "sms_outbound": d.SMSOutbound,
						"segments_outbound": d.SegmentsOutbound, "sms_inbound": d.SMSInbound, "segments_inbound": d.SegmentsInbound,
						"mms_outbound": d.MMSOutbound, "mms_inbound": d.MMSInbound, "voice_minutes": d.VoiceMinutes,
						"verifications": d.Verifications}
				}
				return a.print(map[string]any{"from": r.From.Format(time.DateOnly), "to": r.To.Format(time.DateOnly), "data": days},
					func(w io.Writer) {
						tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
						fmt.Fprintln(tw, "DATE\tACCOUNT\tSMS OUT\tSEGMENTS OUT\tSMS IN\tSEGMENTS IN\tMMS OUT\tMMS IN\tVOICE MIN\tVERIFICATIONS\t")
						for _, d := range r.Days {
							fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", d.Day, d.AccountID, d.SMSOutbound, d.SegmentsOutbound,
								d.SMSInbound, d.SegmentsInbound, d.MMSOutbound, d.MMSInbound, d.VoiceMinutes, d.Verifications)
						}
						_ = tw.Flush()
						if len(r.Days) == 0 {
							fmt.Fprintf(w, "no usage from %s to %s\n", r.From.Format(time.DateOnly), r.To.Format(time.DateOnly))
						}
					})
			})
		},
	}
	c.Flags().StringVar(&project, "project", "", "the project's id (required)")
	c.Flags().StringVar(&account, "account", "", "only this account's usage")
	c.Flags().StringVar(&from, "from", "", "the first day, YYYY-MM-DD (default: 29 days before --to)")
	c.Flags().StringVar(&to, "to", "", "the last day, YYYY-MM-DD, included (default: today)")
	c.Flags().BoolVar(&asCSV, "csv", false, "print CSV (the console's export) instead of a table")
	a.settings.register(c.Flags(), scopeDomain)
	return c
}

// devConsoleOwner is the local project's first console owner, for `serve --dev-key`.
const devConsoleOwner = "owner@localhost"

// devConsole makes sure the local project has its development owner and returns the one-time
// password to print: a new one while that owner has not chosen a password of their own (only
// hashes are stored, so it cannot be shown again), empty once they have.
func (a *app) devConsole(ctx context.Context, core *service.Core, projectID string) (string, error) {
	u, err := core.Store.ConsoleUserByEmail(ctx, devConsoleOwner)
	switch {
	case errors.Is(err, store.ErrNotFound):
		_, password, err := core.Console.AddMember(ctx, a.actor(), projectID, devConsoleOwner, store.RoleOwner)
		return password, err
	case err != nil:
		return "", err
	case !u.PasswordOneTime:
		return "", nil
	}
	return core.Console.ResetPassword(ctx, a.actor(), devConsoleOwner)
}

func printConsoleBanner(w io.Writer, addr, password string) {
	fmt.Fprintf(w, "Operator console: https://%s%s/\n", addr, server.ConsolePath)
	if password == "" {
		fmt.Fprintf(w, "  sign in as %s with the password you chose\n  (forgot it? switchboard console user reset-password --email %s)\n\n",
			devConsoleOwner, devConsoleOwner)
		return
	}
	fmt.Fprintf(w, "  email:              %s\n  one-time password:  %s  (choose your own at the first sign-in)\n\n", devConsoleOwner, password)
}
