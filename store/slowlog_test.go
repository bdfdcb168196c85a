package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

var _ = Describe("The store's logger", func() {
	It("gets the slow statements, as JSON through the handler Open is given, without their arguments", func(ctx context.Context) {
		var buf bytes.Buffer
		log := slog.New(slog.NewJSONHandler(&buf, nil))
		db, err := store.Open(ctx, store.Config{URL: filepath.Join(GinkgoT().TempDir(), "slow.db"), Logger: log, SlowQuery: time.Nanosecond})
		Expect(err).NotTo(HaveOccurred())
		defer db.Close()
		_, err = db.Migrate(ctx)
		Expect(err).NotTo(HaveOccurred())
		_, err = db.CreateProject(ctx, "secret-looking-argument")
		Expect(err).NotTo(HaveOccurred())
		Expect(buf.String()).NotTo(BeEmpty())
		var insert map[string]any
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			var m map[string]any
			Expect(json.Unmarshal([]byte(line), &m)).To(Succeed(), line)
			if s, _ := m["sql"].(string); strings.Contains(s, "INSERT INTO") && strings.Contains(s, "projects") {
				insert = m
			}
		}
		Expect(insert).To(SatisfyAll(HaveKeyWithValue("msg", "slow query"), HaveKeyWithValue("level", "WARN"), HaveKey("duration_ms")))
		Expect(buf.String()).NotTo(ContainSubstring("secret-looking-argument"), "placeholders, never arguments")
	})
})
