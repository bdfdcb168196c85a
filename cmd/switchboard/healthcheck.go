package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// healthcheckCommand is `switchboard healthcheck`: a container's HEALTHCHECK, which has no curl
// in an image that holds only this binary.
func (a *app) healthcheckCommand() *cobra.Command {
	var target string
	c := &cobra.Command{
		Use:   "healthcheck [--url URL]",
		Short: "Exit 0 when the local server answers its readiness probe (for container health checks)",
		Long: `Ask the server on this machine for /readyz and exit 0 when it answers 200, 1 otherwise. The
default URL is https://127.0.0.1:<port of --listen>/readyz; the certificate is not verified (the
connection does not leave the machine).`,
		Example: "  switchboard healthcheck\n  switchboard healthcheck --url https://127.0.0.1:8443/healthz",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.loadWith(cmd, []string{"listen"}); err != nil {
				return err
			}
			if target == "" {
				_, port, err := net.SplitHostPort(a.cfg.Listen)
				if err != nil {
					return err
				}
				target = "https://" + net.JoinHostPort("127.0.0.1", port) + "/readyz"
			}
			client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback probe of this machine's own server
			ctx := cmd.Context()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
			if err != nil {
				return err
			}
			resp, err := client.Do(req)
			if err != nil {
				return fmt.Errorf("healthcheck: %s: %w", target, err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			if resp.StatusCode != http.StatusOK {
				return errors.New("healthcheck: " + target + ": " + resp.Status + ": " + strings.TrimSpace(string(body)))
			}
			return a.print(map[string]any{"url": target, "status": resp.StatusCode}, func(w io.Writer) {
				fmt.Fprintf(w, "%s: %s\n", target, strings.TrimSpace(string(body)))
			})
		},
	}
	c.Flags().StringVar(&target, "url", "", "the URL to probe; default: https://127.0.0.1:<port of --listen>/readyz")
	c.Flags().Var(a.settings.byName("listen").value, "listen", "the server's TLS listener, whose port the default URL uses (SWITCHBOARD_LISTEN)")
	return c
}
