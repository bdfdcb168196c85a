package webhooks

import (
	"bufio"
	"io"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// answerConn is a connection of the pool that reads raw, in reads of at most chunk bytes (0: all
// at once), as answer reads an endpoint's.
func answerConn(raw string, chunk int) *h1Conn {
	var r io.Reader = strings.NewReader(raw)
	if chunk > 0 {
		r = &chunkedReader{r: r, n: chunk}
	}
	pc := &h1Conn{in: cappedReader{r: r, left: h1MaxAnswer}}
	pc.br = bufio.NewReaderSize(&pc.in, 4096)
	return pc
}

type chunkedReader struct {
	r io.Reader
	n int
}

func (c *chunkedReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// answerRead is what answer made of an answer: its results, and what it left unread.
type answerRead struct {
	status  int
	snippet string
	keep    bool
	err     string
	rest    string
}

// readAnswer reads raw's first answer with answer, or with net/http alone (plain false), and tells
// whether it took plainAnswer's way.
func readAnswer(raw string, chunk int, plain bool) (answerRead, bool) {
	pc := answerConn(raw, chunk)
	var status int
	var snippet []byte
	var keep, took bool
	var err error
	if plain {
		status, snippet, keep, err, took = pc.plainAnswer()
	}
	if !took {
		status, snippet, keep, err = pc.readAnswer()
	}
	got := answerRead{status: status, snippet: string(snippet), keep: keep}
	if err != nil {
		got.err = err.Error()
	}
	rest, _ := io.ReadAll(pc.br)
	got.rest = string(rest)
	return got, took
}

var _ = Describe("An attempt's answer", func() {
	It("is read without net/http when it is a plain 2xx, as net/http reads it", func() {
		plain := []string{
			"HTTP/1.1 204 No Content\r\nDate: Wed, 25 Nov 2026 15:00:00 GMT\r\n\r\n",
			"HTTP/1.1 204\r\n\r\n",
			"HTTP/1.1 200 OK\r\nContent-Length: 11\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nhello there",
			"HTTP/1.1 202 Accepted\r\ncontent-length:  0 \r\n\r\n",
			"HTTP/1.1 200 OK\r\nContent-Length: 300\r\n\r\n" + strings.Repeat("x", 300),
			"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nextra",
			"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 204 No Content\r\n\r\n",
		}
		other := []string{
			"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\nbroke",
			"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n",
			"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
			"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n",
			"HTTP/1.0 200 OK\r\n\r\nto the end",
			"HTTP/1.1 200 OK\r\n\r\nto the end",
			"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
			"HTTP/1.1 200 OK\r\nContent-Length: 70000\r\n\r\n" + strings.Repeat("y", 70000),
			"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 0\r\n\r\n",
			"HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 0\r\n\r\n",
			"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
			"HTTP/1.1 2000 OK\r\n\r\n",
			"HTTP/1.1 200 OK\nContent-Length: 0\n\n",
			"HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx",
			"",
			"HTTP/1.1 20",
		}
		for _, chunk := range []int{0, 1, 7} {
			for _, raw := range append(plain, other...) {
				want, _ := readAnswer(raw, chunk, false)
				got, took := readAnswer(raw, chunk, true)
				Expect(got).To(Equal(want), "%q in reads of %d", raw, chunk)
				if chunk == 0 && raw != "" {
					Expect(took).To(Equal(contains(plain, raw)), "%q", raw)
				}
			}
		}
	})
})

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// FuzzPlainAnswer checks plainAnswer against net/http's reading of the same bytes (answer's other
// way): the same status, body's start, keep-alive and bytes left, whenever it reads an answer.
func FuzzPlainAnswer(f *testing.F) {
	for _, s := range []string{"HTTP/1.1 204 No Content\r\nDate: x\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nContent-Length: 03\r\n\r\nabcd", "HTTP/1.1 201\r\nA: \t b \r\n\r\n", "HTTP/1.1 299 X\r\n\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, took := readAnswer(raw, 0, true)
		if !took {
			return
		}
		want, _ := readAnswer(raw, 0, false)
		if got != want {
			t.Fatalf("%q:\n plainAnswer %+v\n net/http    %+v", raw, got, want)
		}
	})
}

// BenchmarkAnswer reads the e2e bench's endpoint's answer (net/http's 204) from a connection's
// buffer: by answer (plain), and by net/http's ReadResponse alone (nethttp).
func BenchmarkAnswer(b *testing.B) {
	raw := "HTTP/1.1 204 No Content\r\nDate: Wed, 25 Nov 2026 15:00:00 GMT\r\n\r\n"
	for _, plain := range []bool{true, false} {
		name := "nethttp"
		if plain {
			name = "plain"
		}
		b.Run(name, func(b *testing.B) {
			src := strings.NewReader(raw)
			pc := &h1Conn{in: cappedReader{r: src}}
			pc.br = bufio.NewReaderSize(&pc.in, 4096)
			b.ReportAllocs()
			for b.Loop() {
				src.Reset(raw)
				pc.in.left = h1MaxAnswer
				var status int
				var err error
				if plain {
					status, _, _, err = pc.answer()
				} else {
					status, _, _, err = pc.readAnswer()
				}
				if status != 204 || err != nil {
					b.Fatal(status, err)
				}
			}
		})
	}
}
