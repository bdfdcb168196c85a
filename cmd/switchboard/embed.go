package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

// embedCommand is `switchboard embed origins …|token …`: what the embeddable components need
// from the operator (the console will do the same through the same store calls).
func (a *app) embedCommand() *cobra.Command {
	var project string
	originsAdd := &cobra.Command{
		Use:   "add --project prj_… ORIGIN…",
		Short: "Allow origins to frame the project's components",
		Long: `Allow origins (https://host[:port]; http:// only for localhost) to embed the project's
components: their pages send Content-Security-Policy: frame-ancestors with these origins, so a
browser shows them only inside pages of these origins (and Switchboard's own).`,
		Example: "  switchboard embed origins add --project prj_… https://app.acme.com https://staging.acme.com",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if project == "" {
				return errors.New("embed origins add: --project is required")
			}
			var origins []string
			for _, arg := range args {
				o, err := service.NormalizeOrigin(arg)
				if err != nil {
					return err
				}
				origins = append(origins, o)
			}
			return a.withStore(cmd, true, func(ctx context.Context, st *store.Store) error {
				for _, o := range origins {
					if err := st.AddEmbedOrigin(ctx, project, o); err != nil {
						return lookupError(err, "project", project)
					}
				}
				return a.printOrigins(ctx, st, project)
			})
		},
	}
	originsRemove := &cobra.Command{
		Use:     "remove --project prj_… ORIGIN…",
		Short:   "Stop origins from framing the project's components",
		Example: "  switchboard embed origins remove --project prj_… https://staging.acme.com",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if project == "" {
				return errors.New("embed origins remove: --project is required")
			}
			return a.withStore(cmd, true, func(ctx context.Context, st *store.Store) error {
				for _, arg := range args {
					o, err := service.NormalizeOrigin(arg)
					if err != nil {
						return err
					}
					if err := st.RemoveEmbedOrigin(ctx, project, o); err != nil {
						return lookupError(err, "embedding origin", o)
					}
				}
				return a.printOrigins(ctx, st, project)
			})
		},
	}
	originsList := &cobra.Command{
		Use:     "list --project prj_…",
		Short:   "List the origins allowed to frame the project's components",
		Example: "  switchboard embed origins list --project prj_… --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if project == "" {
				return errors.New("embed origins list: --project is required")
			}
			return a.withStore(cmd, true, func(ctx context.Context, st *store.Store) error {
				if _, err := st.GetProject(ctx, project); err != nil {
					return lookupError(err, "project", project)
				}
				return a.printOrigins(ctx, st, project)
			})
		},
	}
	for _, c := range []*cobra.Command{originsAdd, originsRemove, originsList} {
		c.Flags().StringVar(&project, "project", "", "project id (required)")
	}
	origins := group("origins", "Origins allowed to embed a project's components (frame-ancestors)", originsAdd, originsRemove, originsList)

	var account string
	tokenCreate := &cobra.Command{
		Use:   "create --account acct_…",
		Short: "Create an account's publishable token (deprecated); its secret is shown once",
		Long: `Create a publishable token (atok_live_…) for an account. Deprecated: components should be
opened with user tokens (POST /users/{user_id}/tokens). A publishable token still opens a
component as any user of its account, with /embed/inbox?user_id=usr_…&token=atok_live_…, and its
answers carry a Deprecation header. Only its SHA-256 is stored.`,
		Example: "  switchboard embed token create --account acct_…",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if account == "" {
				return errors.New("embed token create: --account is required")
			}
			return a.withStore(cmd, true, func(ctx context.Context, st *store.Store) error {
				t, secret, err := st.CreatePublishableToken(ctx, account)
				if err != nil {
					return lookupError(err, "account", account)
				}
				return a.print(map[string]any{"id": t.ID, "token": secret, "account_id": t.AccountID, "project_id": t.ProjectID},
					func(w io.Writer) {
						fmt.Fprintf(w, "created publishable token %s for %s (deprecated: prefer user tokens)\n%s\n(shown once: store it now)\n",
							t.ID, t.AccountID, secret)
					})
			})
		},
	}
	tokenCreate.Flags().StringVar(&account, "account", "", "account id (required)")
	tokenList := &cobra.Command{
		Use:     "list --account acct_…",
		Short:   "List an account's publishable tokens, revoked ones included",
		Example: "  switchboard embed token list --account acct_…",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if account == "" {
				return errors.New("embed token list: --account is required")
			}
			return a.withStore(cmd, true, func(ctx context.Context, st *store.Store) error {
				ts, err := st.ListPublishableTokens(ctx, account)
				if err != nil {
					return err
				}
				out := make([]map[string]any, 0, len(ts))
				for _, t := range ts {
					out = append(out, tokenJSON(&t))
				}
				return a.print(out, func(w io.Writer) {
					tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "ID\tHINT\tCREATED\tREVOKED")
					for _, t := range ts {
						revoked := "-"
						if t.RevokedAt != nil {
							revoked = t.RevokedAt.Format(time.RFC3339)
						}
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.ID, t.Hint, t.CreatedAt.Format(time.RFC3339), revoked)
					}
					_ = tw.Flush()
				})
			})
		},
	}
	tokenList.Flags().StringVar(&account, "account", "", "account id (required)")
	tokenRevoke := &cobra.Command{
		Use:     "revoke atk_…",
		Short:   "Revoke a publishable token at once",
		Example: "  switchboard embed token revoke atk_01jtp4dsdq6de56aa0tfm2e5b3",
		Args:    exactlyOne("publishable token id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(cmd, true, func(ctx context.Context, st *store.Store) error {
				t, err := st.RevokePublishableToken(ctx, args[0])
				if err != nil {
					return lookupError(err, "publishable token", args[0])
				}
				return a.print(tokenJSON(t), func(w io.Writer) { fmt.Fprintf(w, "revoked %s\n", t.ID) })
			})
		},
	}
	token := group("token", "Publishable tokens (deprecated): create, list, revoke", tokenCreate, tokenList, tokenRevoke)
	return group("embed", "What the embeddable components need: allowed origins, publishable tokens", origins, token)
}

func tokenJSON(t *store.PublishableToken) map[string]any {
	return map[string]any{"id": t.ID, "account_id": t.AccountID, "project_id": t.ProjectID, "hint": t.Hint,
		"created_at": t.CreatedAt, "revoked_at": t.RevokedAt}
}

func (a *app) printOrigins(ctx context.Context, st *store.Store, project string) error {
	os, err := st.EmbedOrigins(ctx, project)
	if err != nil {
		return err
	}
	return a.print(map[string]any{"project_id": project, "origins": os}, func(w io.Writer) {
		if len(os) == 0 {
			fmt.Fprintf(w, "no origin may embed %s's components yet\n", project)
		}
		for _, o := range os {
			fmt.Fprintln(w, o)
		}
	})
}

// embedDemo is the local demo of the components that serve --dev-key prepares: an account of the
// local project with a number, a user, a fresh token, and a page on another origin of the same
// server that embeds the components for that user.
type embedDemo struct {
	server.EmbedDemo
	// Number is the demo account's number, to text with `switchboard sim inbound`.
	Number string
	// Token is a user token for the demo user; PageOrigin is the demo page's origin, which the
	// local project allows to frame its components.
	Token, PageOrigin string
}

// demoAccountName names the local project's account of the components' demo.
const demoAccountName = "Components demo"

// prepareEmbedDemo finds or makes the demo account (with a local number attached to a 10DLC
// campaign, which the simulated registry approves moments later), its user and a token, and
// allows the demo page's origin (the public URL's host swapped between localhost and
// 127.0.0.1, so that the page is another origin than the components).
func prepareEmbedDemo(ctx context.Context, core *service.Core, projectID, publicURL string) (*embedDemo, error) {
	st := core.Store
	accts, _, err := st.ListAccounts(ctx, projectID, store.Page{Limit: 100})
	if err != nil {
		return nil, err
	}
	var acct *store.Account
	for i := range accts {
		if accts[i].Name == demoAccountName && accts[i].ArchivedAt == nil {
			acct = &accts[i]
		}
	}
	if acct == nil {
		acct = &store.Account{ProjectID: projectID, Name: demoAccountName}
		if err := st.CreateAccount(ctx, acct); err != nil {
			return nil, err
		}
	}
	numbers, _, err := st.ListPhoneNumbers(ctx, projectID, acct.ID, store.Page{Limit: 1})
	if err != nil {
		return nil, err
	}
	var number *store.PhoneNumber
	if len(numbers) > 0 {
		number = &numbers[0]
	} else if number, err = core.Numbers.Purchase(ctx, projectID, acct.ID, service.Purchase{Type: store.NumberLocal, Country: "US"}); err != nil {
		return nil, fmt.Errorf("buy the demo's number: %w", err)
	}
	if number.CampaignID == nil {
		texts := []string{"Hi, this is Acme Dental: your appointment is confirmed for Friday at 10am. Reply STOP to opt out."}
		campaign, err := core.Numbers.CreateCampaign(ctx, projectID, acct.ID, service.CampaignFields{
			UseCases: &[]string{"customer_care"}, Description: ptr("Conversations between the clinic's staff and its patients."),
			MessageSamples: &texts, ConsentFlow: ptr("Patients text the clinic first, or give their number when they book."),
			PrivacyPolicyURL: ptr("https://example.com/privacy"), Volume: ptr("low"),
		}, nil, "")
		if err != nil {
			return nil, fmt.Errorf("register the demo's campaign: %w", err)
		}
		if _, err := core.Numbers.UpdateNumber(ctx, projectID, number.ID, service.NumberPatch{CampaignID: &campaign.ID}); err != nil {
			return nil, fmt.Errorf("attach the demo's number: %w", err)
		}
	}
	users, _, err := st.ListUsers(ctx, projectID, acct.ID, store.Page{Limit: 1})
	if err != nil {
		return nil, err
	}
	var user *store.User
	if len(users) > 0 {
		user = &users[0]
	} else {
		user = &store.User{ProjectID: projectID, AccountID: acct.ID, FirstName: "Dana", LastName: ptr("Reyes")}
		if err := st.CreateUser(ctx, user); err != nil {
			return nil, err
		}
	}
	u, err := url.Parse(publicURL)
	if err != nil {
		return nil, err
	}
	other := "localhost"
	if u.Hostname() == "localhost" {
		other = "127.0.0.1"
	}
	page := u.Scheme + "://" + other
	if u.Port() != "" {
		page += ":" + u.Port()
	}
	if err := st.AddEmbedOrigin(ctx, projectID, page); err != nil {
		return nil, err
	}
	token, err := core.Tokens.Issue(ctx, user.ID, acct.ID, service.TokenMaxSeconds)
	if err != nil {
		return nil, err
	}
	return &embedDemo{EmbedDemo: server.EmbedDemo{UserID: user.ID, AccountID: acct.ID, Secret: rand.Text()},
		Number: number.Number, Token: token, PageOrigin: page}, nil
}

// printDemoBanner tells how to open the components' demo and make a message appear in it.
func printDemoBanner(w io.Writer, d *embedDemo, publicURL string) {
	fmt.Fprintf(w, `Embedded inbox, conversation and unread badge, live (the demo user's token is in the link;
your browser must accept the self-signed certificate of both %[3]s and %[4]s):
  %[1]s
Text the demo number from a simulated handset, and watch it arrive:
  switchboard sim inbound --from +14155550123 --to %[2]s --body "Can I move my appointment to Friday?"

`, d.link(publicURL), d.Number, strings.TrimSuffix(publicURL, "/"), d.PageOrigin)
}

// link is the demo page's address, with what it needs in the fragment (which no server logs).
func (d *embedDemo) link(publicURL string) string {
	frag := url.Values{"origin": {strings.TrimSuffix(publicURL, "/")}, "token": {d.Token}, "secret": {d.Secret}, "number": {d.Number}}
	return d.PageOrigin + "/embed/demo#" + frag.Encode()
}

func ptr[T any](v T) *T { return &v }
