// Package web holds Switchboard's browser code, built: the embeddable components (inbox,
// conversation, unread badge), their loader script and the demo host page, and later the operator
// console. The sources are the TypeScript project beside this file (src/, package.json); `make
// web` builds them into dist/, which is committed, so building the Go binary needs no Node. The
// server serves these files; this package only embeds them.
package web

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Dist is the built front end: HTML entry pages at its root (embed.html, demo.html), the loader
// at loader/v1.js, and content-hashed assets under ui/assets/.
var Dist fs.FS = mustSub(dist, "dist")

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // dist is embedded above; only a renamed directory fails, at start
	}
	return sub
}
