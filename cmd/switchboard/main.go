// Command switchboard runs the Switchboard messaging API and its operator tasks: serving,
// migrations, backups, projects, API keys, request logs, webhooks and the simulated carrier. It
// is the only place that reads flags, environment variables and the configuration file.
//
// The command line is built on cobra (github.com/spf13/cobra): it gives every command its own
// help with examples, typed POSIX flags that may come before or after arguments, "did you mean"
// suggestions and shell completion scripts, and it is what kubectl, gh and docker use, so
// operators already know its conventions.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	_ "time/tzdata" // IANA zones for account time_zone validation on machines without them

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/switchboard/switchboard/service"
	"github.com/switchboard/switchboard/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "switchboard:", err)
		os.Exit(1)
	}
}

// run executes one command line; it is main without the process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := newApp(stdout, stderr).rootCommand()
	if args == nil {
		args = []string{} // cobra would read os.Args
	}
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	return humanize(root.ExecuteContext(ctx))
}

// app is one run of the command line: its streams, its configuration and its common flags.
type app struct {
	stdout, stderr io.Writer
	cfg            *Config
	settings       settings
	// json and configPath are the --json and --config flags.
	json       bool
	configPath string
	// log is the JSON logger every part of the process logs through, set by load.
	log *slog.Logger
}

func newApp(stdout, stderr io.Writer) *app {
	cfg := &Config{}
	a := &app{stdout: stdout, stderr: stderr, cfg: cfg, settings: newSettings(cfg)}
	a.settings.setDefaults()
	a.log = newLogger(stderr, slog.LevelWarn)
	return a
}

const rootLong = `Switchboard is a self-hostable business messaging API: SMS/MMS, voice and voicemail,
carrier campaigns, phone numbers, phone verification and signed webhooks, wire-compatible
with the Surge API.

'switchboard serve' runs the API; the other commands are the operator's: they act on the same
database as the running servers. Every command takes --json for machine-readable output.

Settings come from flags, SWITCHBOARD_* variables (or NAME_FILE, a file holding the value),
and an optional YAML file (--config), in that order of precedence. 'switchboard serve --help'
lists them all.`

const rootExample = `  switchboard serve --dev-key                    # local development on https://127.0.0.1:8443
  switchboard project create --name Acme
  switchboard key create --project prj_…
  switchboard webhook set --project prj_… --url https://example.com/hooks
  switchboard completion bash > /etc/bash_completion.d/switchboard`

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "switchboard",
		Short:         "A self-hostable business messaging API and its operator commands",
		Long:          rootLong,
		Example:       rootExample,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	pf := root.PersistentFlags()
	pf.BoolVar(&a.json, "json", false, "print machine-readable JSON")
	pf.StringVar(&a.configPath, "config", "", "YAML file of settings, keyed like the flags with _ for - (SWITCHBOARD_CONFIG)")
	a.settings.register(pf, scopeGlobal)
	root.SetFlagErrorFunc(a.flagError)
	root.AddGroup(&cobra.Group{ID: "run", Title: "Running:"}, &cobra.Group{ID: "ops", Title: "Operating:"})
	for _, c := range []*cobra.Command{a.serveCommand(), a.migrateCommand(), a.backupCommand(), a.healthcheckCommand(), a.versionCommand()} {
		c.GroupID = "run"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{a.projectCommand(), a.keyCommand(), a.logsCommand(), a.webhookCommand(), a.usageCommand(),
		a.consoleCommand(), a.simCommand(), a.smppCommand(), a.embedCommand(), a.accountCommand()} {
		c.GroupID = "ops"
		root.AddCommand(c)
	}
	return root
}

// flagError names the setting behind a flag whose value is refused.
func (a *app) flagError(cmd *cobra.Command, err error) error {
	var invalid *pflag.InvalidValueError
	if errors.As(err, &invalid) {
		if s := a.settings.byName(invalid.GetFlag().Name); s != nil {
			return fmt.Errorf("%s: %w", s.label(), invalid.Unwrap())
		}
		return fmt.Errorf("--%s: %w", invalid.GetFlag().Name, invalid.Unwrap())
	}
	return fmt.Errorf("%w\nRun '%s --help' for usage.", err, cmd.CommandPath())
}

// load reads the settings of the given scopes (the global ones always) from the flags cmd parsed,
// the environment and the configuration file, validates them, and sets up the logger; it warns
// about SWITCHBOARD_ variables that no setting reads.
func (a *app) load(cmd *cobra.Command, scopes ...scope) error {
	return a.loadWith(cmd, nil, scopes...)
}

// loadWith is load that also reads the named settings of other scopes (without validating
// them beyond their type).
func (a *app) loadWith(cmd *cobra.Command, names []string, scopes ...scope) error {
	path := a.configPath
	if path == "" {
		path = os.Getenv("SWITCHBOARD_CONFIG")
	}
	var file *configFile
	if path != "" {
		var err error
		if file, err = readConfigFile(path, a.settings); err != nil {
			return err
		}
	}
	domain := slices.Contains(scopes, scopeDomain)
	wanted := func(s *setting) bool {
		// The public URL defaults to the listener's, which the domain commands need too.
		return s.scope == scopeGlobal || slices.Contains(scopes, s.scope) || (domain && s.name == "listen") ||
			slices.Contains(names, s.name)
	}
	if err := a.settings.load(cmd.Flags(), file, wanted); err != nil {
		return err
	}
	if err := a.cfg.validate(a.settings, scopes...); err != nil {
		return err
	}
	level := a.cfg.LogLevel
	if !slices.Contains(scopes, scopeServe) {
		level = max(level, slog.LevelWarn) // an operator command's output is its own; its log only warns
	}
	a.log = newLogger(a.stderr, level)
	for _, w := range a.settings.unknownVariables() {
		a.log.Warn(w)
	}
	return nil
}

// newLogger is the one JSON handler every line of the process goes through.
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// output prints a command's result as JSON or as text.
func (a *app) print(v any, text func(io.Writer)) error {
	if a.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	text(a.stdout)
	return nil
}

// group is a command that only holds subcommands: run alone or with an unknown subcommand, it
// says which exist and fails.
func group(use, short string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var names []string
			for _, s := range cmd.Commands() {
				if s.IsAvailableCommand() {
					names = append(names, s.Name())
				}
			}
			if len(args) == 0 {
				return fmt.Errorf("'%s' needs a subcommand: %s\nRun '%s --help' for usage.", cmd.CommandPath(),
					strings.Join(names, ", "), cmd.CommandPath())
			}
			return fmt.Errorf("unknown command %q for '%s': the subcommands are %s", args[0], cmd.CommandPath(), strings.Join(names, ", "))
		},
	}
	c.AddCommand(subs...)
	return c
}

// exactlyOne accepts one positional argument, and otherwise says what to give.
func exactlyOne(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("%s: give one %s", strings.TrimPrefix(cmd.CommandPath(), "switchboard "), what)
		}
		return nil
	}
}

// notFoundError is a lookup that found nothing, said for people; errors.Is still sees
// store.ErrNotFound.
type notFoundError struct {
	what, id string
	err      error
}

func (e *notFoundError) Error() string {
	return fmt.Sprintf("%s %s not found (check the id, e.g. with a list command)", e.what, e.id)
}
func (e *notFoundError) Unwrap() error { return e.err }

// lookupError turns store.ErrNotFound from looking up the named thing into a message for people.
func lookupError(err error, what, id string) error {
	if errors.Is(err, store.ErrNotFound) {
		return &notFoundError{what: what, id: id, err: err}
	}
	return err
}

// humanize turns the errors that reach the command line into messages for people: a domain
// refusal says its message without its slug, and a store error its reason without the package.
func humanize(err error) error {
	if err == nil {
		return nil
	}
	var nf *notFoundError
	if errors.As(err, &nf) {
		return err
	}
	var se *service.Error
	if errors.As(err, &se) {
		return &plainError{msg: se.Message, err: err}
	}
	if errors.Is(err, store.ErrNotFound) {
		return &plainError{msg: "not found: " + strings.TrimSuffix(strings.TrimSuffix(err.Error(), store.ErrNotFound.Error()), ": "), err: err}
	}
	return err
}

// plainError is an error with a message for people that keeps its cause for errors.Is.
type plainError struct {
	msg string
	err error
}

func (e *plainError) Error() string { return e.msg }
func (e *plainError) Unwrap() error { return e.err }
