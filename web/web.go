// Package web holds Switchboard's browser code, built: the embeddable components (inbox,
// conversation, unread badge), their loader script and the demo host page, and the operator
// console. The sources are the TypeScript project beside this file (src/, package.json); `make
// web` builds them into dist/, which is committed, so building the Go binary needs no Node. The
// server serves these files; this package only embeds them, and the descriptions of the two
// APIs the pages call.
package web

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Dist is the built front end: HTML entry pages at its root (embed.html, demo.html, console.html), the loader
// at loader/v1.js, and content-hashed assets under ui/assets/.
var Dist fs.FS = mustSub(dist, "dist")

// ConsoleAPI is web/console-api.yaml, the description of the operator console's API, and
// EmbedAPI is web/embed-api.yaml, the components' API's, which it references: the specs check
// the server's answers against them (server/contracttest).
var (
	//go:embed console-api.yaml
	ConsoleAPI []byte
	//go:embed embed-api.yaml
	EmbedAPI []byte
)

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // dist is embedded above; only a renamed directory fails, at start
	}
	return sub
}
