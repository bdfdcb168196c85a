package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/switchboard/switchboard/store"
)

// Set at build time by the Makefile and the Dockerfile:
//
//	go build -ldflags "-X main.version=v1.2.0 -X main.commit=abc123 -X main.buildDate=2026-11-24T12:00:00Z"
//
// Without them, what debug.ReadBuildInfo knows is used (the module version with go install, the
// VCS revision and time when built from a checkout).
var (
	version   = ""
	commit    = ""
	buildDate = ""
)

// buildInfo describes this binary.
type buildInfo struct {
	Version       string `json:"version"`
	Commit        string `json:"commit"`
	BuildDate     string `json:"build_date"`
	GoVersion     string `json:"go_version"`
	SchemaVersion int    `json:"schema_version"`
}

// currentBuild fills in what the linker flags left empty from the Go build information.
func currentBuild() buildInfo {
	b := buildInfo{Version: version, Commit: commit, BuildDate: buildDate, GoVersion: runtime.Version(), SchemaVersion: store.SchemaVersion()}
	if info, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && b.Commit == "":
				b.Commit = s.Value
			case s.Key == "vcs.time" && b.BuildDate == "":
				b.BuildDate = s.Value
			case s.Key == "vcs.modified" && s.Value == "true" && b.Commit != "":
				b.Commit += "-dirty"
			}
		}
	}
	for _, f := range []*string{&b.Version, &b.Commit, &b.BuildDate} {
		if *f == "" {
			*f = "unknown"
		}
	}
	if b.Version == "unknown" {
		b.Version = "devel"
	}
	return b
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version, commit, build date, Go version and database schema version",
		Example: "  switchboard version\n  switchboard version --json",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			b := currentBuild()
			return a.print(b, func(w io.Writer) {
				fmt.Fprintf(w, "switchboard %s\n  commit:  %s\n  built:   %s\n  go:      %s\n  schema:  %d (migrations this binary carries)\n",
					b.Version, b.Commit, b.BuildDate, b.GoVersion, b.SchemaVersion)
			})
		},
	}
}
