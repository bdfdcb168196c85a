package server_test

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Stored files (attachments, recordings) are served from signed URLs on the API's own origin, so
// a file must never run there: these specs fetch hostile files as attachments and check how each
// is served.
var _ = Describe("Stored files", Ordered, func() {
	var (
		t     *tenant
		acct  string
		files *httptest.Server
		// paths are the signed paths of the attachments, by file name.
		paths = map[string]string{}
	)
	// served is what the attachment server answers at /{name}: a declared type ("" for none)
	// and the bytes.
	served := map[string][2]string{
		"page.html":   {"text/html; charset=utf-8", "<html><script>alert(document.cookie)</script></html>"},
		"image.svg":   {"image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`},
		"page.xhtml":  {"application/xhtml+xml", `<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>`},
		"data.xml":    {"text/xml", `<?xml version="1.0"?><x:script xmlns:x="http://www.w3.org/1999/xhtml">alert(1)</x:script>`},
		"app.js":      {"application/javascript", "alert(document.cookie)"},
		"style.css":   {"text/css", "body{background:url(https://evil.test/)}"},
		"notes.txt":   {"text/plain", "<script>alert(1)</script>"},
		"untyped":     {"", "<!DOCTYPE html><html><script>alert(1)</script></html>"},
		"octets":      {"application/octet-stream", "<html><script>alert(1)</script></html>"},
		"garbage":     {"text/html;;;==", "<html><script>alert(1)</script></html>"},
		"fake.png":    {"image/png; charset=\"><script>\"", "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 32)},
		"photo.png":   {"image/png", "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 32)},
		"untyped.png": {"", "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 32)},
		"photo.jpg":   {"image/jpeg", "\xff\xd8\xff\xe0" + strings.Repeat("\x00", 32)},
		"doc.pdf":     {"application/pdf", "%PDF-1.4\n%%EOF\n"},
		"clip.mp4":    {"video/mp4", "\x00\x00\x00\x18ftypmp42"},
		"song.mp3":    {"audio/mpeg", "ID3\x03\x00"},
		"card.vcf":    {"text/vcard", "BEGIN:VCARD\nEND:VCARD\n"},
	}
	// Every file goes out in one of two messages (at most 10 attachments each), which are
	// delivered, so every file is fetched and stored; the entries then read them.
	BeforeAll(func() {
		t, acct, _, _ = newSendingAccount()
		files = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			f, ok := served[strings.TrimPrefix(r.URL.Path, "/")]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Header()["Content-Type"] = []string{f[0]} // "" too: no sniffing by this server
			_, _ = w.Write([]byte(f[1]))
		}))
		DeferCleanup(files.Close)
		names := slices.Sorted(maps.Keys(served))
		var sent []map[string]any
		for batch := range slices.Chunk(names, 10) {
			atts := make([]map[string]any, len(batch))
			for i, name := range batch {
				atts[i] = map[string]any{"url": files.URL + "/" + name}
			}
			sent = append(sent, t.send(acct, map[string]any{"to": newHandset(), "attachments": atts}))
		}
		for _, m := range sent {
			t.awaitStatus(m["id"].(string), "delivered")
			for _, a := range m["attachments"].([]any) {
				r := t.get("/attachments/" + a.(map[string]any)["id"].(string) + "/file")
				Expect(r).To(HaveStatus(http.StatusFound))
				loc, err := url.Parse(r.Header.Get("Location"))
				Expect(err).NotTo(HaveOccurred())
				Expect(loc.Path).To(HavePrefix("/files/"))
				paths[names[len(paths)]] = loc.Path
			}
		}
	})

	DescribeTable("serve an attachment with nosniff and a sandboxing CSP, inline only when inert",
		func(name, contentType, disposition string) {
			path := paths[name]
			for _, method := range []string{http.MethodGet, http.MethodHead} {
				r := t.withKey("").request(method, path, nil)
				Expect(r).To(HaveStatus(http.StatusOK), method)
				Expect(r.Header.Get("Content-Type")).To(Equal(contentType), method)
				Expect(r.Header.Get("Content-Disposition")).To(HavePrefix(disposition+";"), method)
				Expect(r.Header.Get("X-Content-Type-Options")).To(Equal("nosniff"), method)
				Expect(r.Header.Get("Content-Security-Policy")).To(Equal("default-src 'none'; sandbox"), method)
				if method == http.MethodGet {
					Expect(string(r.Body)).To(Equal(served[name][1]), "the bytes are the file's")
				} else {
					Expect(r.Body).To(BeEmpty())
				}
			}
		},
		Entry("HTML", "page.html", "application/octet-stream", "attachment"),
		Entry("SVG", "image.svg", "application/octet-stream", "attachment"),
		Entry("XHTML", "page.xhtml", "application/octet-stream", "attachment"),
		Entry("XML", "data.xml", "application/octet-stream", "attachment"),
		Entry("JavaScript", "app.js", "application/octet-stream", "attachment"),
		Entry("CSS", "style.css", "application/octet-stream", "attachment"),
		Entry("plain text", "notes.txt", "application/octet-stream", "attachment"),
		Entry("HTML bytes without a type: never guessed as text/html", "untyped", "application/octet-stream", "attachment"),
		Entry("HTML bytes declared as octets", "octets", "application/octet-stream", "attachment"),
		Entry("an unparsable type", "garbage", "application/octet-stream", "attachment"),
		Entry("a PNG type with a hostile parameter: served without it", "fake.png", "image/png", "inline"),
		Entry("PNG", "photo.png", "image/png", "inline"),
		Entry("PNG bytes without a type: an inert type may be recognized", "untyped.png", "image/png", "inline"),
		Entry("JPEG", "photo.jpg", "image/jpeg", "inline"),
		Entry("PDF", "doc.pdf", "application/pdf", "inline"),
		Entry("video", "clip.mp4", "video/mp4", "inline"),
		Entry("audio", "song.mp3", "audio/mpeg", "inline"),
		Entry("a vCard keeps its type for MMS carriers, as a download", "card.vcf", "text/vcard", "attachment"),
	)
})
