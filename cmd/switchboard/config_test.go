package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/switchboard/switchboard/store"
)

// logLines decodes the JSON lines of a log, failing on a line that is not JSON.
func logLines(log string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		ExpectWithOffset(1, json.Unmarshal([]byte(line), &m)).To(Succeed(), "a log line that is not JSON: %s", line)
		out = append(out, m)
	}
	return out
}

var _ = Describe("configuration", func() {
	var c *cli
	BeforeEach(func() { c = newCLI() })

	// serveErr runs serve with args and returns its error and what it logged; it must stop by itself.
	serveErr := func(args ...string) (error, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var stderr bytes.Buffer
		err := run(ctx, append([]string{"serve", "--data-dir", c.dataDir, "--listen", "127.0.0.1:0"}, args...), io.Discard, &stderr)
		return err, stderr.String()
	}

	Describe("SWITCHBOARD_DATABASE_URL", func() {
		DescribeTable("refuses a scheme that is not PostgreSQL's or SQLite's, creating nothing",
			func(value string) {
				wd, err := os.Getwd()
				Expect(err).NotTo(HaveOccurred())
				Expect(os.Chdir(c.dataDir)).To(Succeed())
				DeferCleanup(os.Chdir, wd)
				err, _ = serveErr("--database-url", value)
				Expect(err).To(MatchError(SatisfyAll(ContainSubstring("SWITCHBOARD_DATABASE_URL"), ContainSubstring("postgres://"),
					ContainSubstring("sqlite:"))))
				Expect(err.Error()).NotTo(ContainSubstring("hunter2"), "never the password")
				entries, err := os.ReadDir(c.dataDir)
				Expect(err).NotTo(HaveOccurred())
				Expect(entries).To(BeEmpty(), "no SQLite file named after the URL")
			},
			Entry("MySQL", "mysql://root:hunter2@127.0.0.1/x"),
			Entry("a made-up scheme", "mongodb+srv://u:hunter2@cluster/x"),
			Entry("a scheme without slashes", "mysql:x"),
		)

		It("accepts postgres:// and postgresql:// URLs, sqlite: paths and plain paths", func() {
			for _, u := range []string{"postgres://u:p@db:5432/sb?sslmode=disable", "postgresql://u@db/sb"} {
				cfg, err := serveConfig("--database-url", u)
				Expect(err).NotTo(HaveOccurred())
				Expect(cfg.DatabaseURL).To(Equal(u))
			}
			path := filepath.Join(c.dataDir, "elsewhere", "sb.db")
			for _, u := range []string{"sqlite:" + path, "sqlite://" + path, path} {
				cfg, err := serveConfig("--database-url", u)
				Expect(err).NotTo(HaveOccurred())
				Expect(cfg.DatabaseURL).To(Equal(path))
			}
			_, err := c.run("project create", "--name", "x", "--database-url", "sqlite:"+path)
			Expect(err).NotTo(HaveOccurred())
			Expect(path).To(BeARegularFile())
		})

		It("refuses a postgres:// URL without a host", func() {
			_, err := serveConfig("--database-url", "postgres:///sb")
			Expect(err).To(MatchError(ContainSubstring("has no host")))
		})
	})

	DescribeTable("SWITCHBOARD_PUBLIC_URL must be an absolute http(s) URL",
		func(value string, ok bool) {
			cfg, err := serveConfig("--public-url", value)
			if ok {
				Expect(err).NotTo(HaveOccurred())
				Expect(cfg.PublicURL).To(Equal(value))
				return
			}
			Expect(err).To(MatchError(SatisfyAll(ContainSubstring("SWITCHBOARD_PUBLIC_URL / --public-url"), ContainSubstring(value))))
		},
		Entry("words", "not a url", false),
		Entry("no scheme", "sms.example.com", false),
		Entry("another scheme", "ftp://sms.example.com", false),
		Entry("a query", "https://sms.example.com/?a=b", false),
		Entry("credentials", "https://u:p@sms.example.com", false),
		Entry("https", "https://sms.example.com", true),
		Entry("http with a port and a path", "http://10.0.0.5:8080/sb", true),
	)

	Describe("the data directory", func() {
		It("that is a file is refused, naming SWITCHBOARD_DATA_DIR", func() {
			file := filepath.Join(c.dataDir, "plain-file")
			Expect(os.WriteFile(file, nil, 0o600)).To(Succeed())
			err := run(context.Background(), []string{"project", "list", "--data-dir", filepath.Join(file, "data")}, io.Discard, io.Discard)
			Expect(err).To(MatchError(SatisfyAll(ContainSubstring("SWITCHBOARD_DATA_DIR / --data-dir"), ContainSubstring("not a directory"))))
		})

		It("that this user may not write is refused, naming SWITCHBOARD_DATA_DIR, not 'out of memory'", func() {
			var err error
			if os.Geteuid() != 0 {
				dir := filepath.Join(c.dataDir, "readonly")
				Expect(os.Mkdir(dir, 0o555)).To(Succeed())
				err = run(context.Background(), []string{"project", "list", "--data-dir", dir}, io.Discard, io.Discard)
			} else {
				// root writes anywhere: run the command as nobody, in a directory nobody may enter.
				err = runAsNobody(func(dir string) []string {
					ro := filepath.Join(dir, "readonly")
					Expect(os.Mkdir(ro, 0o555)).To(Succeed())
					return []string{"project", "list", "--data-dir", ro}
				})
			}
			Expect(err).To(MatchError(SatisfyAll(ContainSubstring("SWITCHBOARD_DATA_DIR / --data-dir"),
				ContainSubstring("is not writable by this user"), Not(ContainSubstring("out of memory")))))
		})
	})

	Describe("waiting for the database", func() {
		It("retries a database that does not answer with logged backoff, up to SWITCHBOARD_DATABASE_WAIT", func() {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			Expect(err).NotTo(HaveOccurred())
			addr := ln.Addr().String()
			Expect(ln.Close()).To(Succeed()) // nothing listens there now
			start := time.Now()
			err, logs := serveErr("--database-url", "postgres://sb:hunter2@"+addr+"/sb?sslmode=disable", "--database-wait", "2s")
			Expect(err).To(MatchError(SatisfyAll(ContainSubstring("SWITCHBOARD_DATABASE_URL"), ContainSubstring("cannot open the database"),
				ContainSubstring("SWITCHBOARD_DATABASE_WAIT"))))
			Expect(time.Since(start)).To(BeNumerically(">=", time.Second), "it waited")
			var waits int
			for _, l := range logLines(logs) {
				if l["msg"] == "waiting for the database" {
					waits++
					Expect(l).To(SatisfyAll(HaveKey("attempt"), HaveKey("retry_in"), HaveKeyWithValue("gives_up_after", "2s")))
				}
			}
			Expect(waits).To(BeNumerically(">=", 2), logs)
			Expect(logs + err.Error()).NotTo(ContainSubstring("hunter2"))
		})

		It("with SWITCHBOARD_DATABASE_WAIT=0 fails at once", func() {
			err, logs := serveErr("--database-url", "postgres://sb@127.0.0.1:1/sb?sslmode=disable", "--database-wait", "0")
			Expect(err).To(MatchError(ContainSubstring("cannot open the database")))
			Expect(logs).NotTo(ContainSubstring("waiting for the database"))
		})

		It("starts serving once a database that was down answers", func(ctx SpecContext) {
			dbURL := freshPostgres(ctx)
			u, err := url.Parse(dbURL)
			Expect(err).NotTo(HaveOccurred())
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			Expect(err).NotTo(HaveOccurred())
			proxyAddr := ln.Addr().String()
			Expect(ln.Close()).To(Succeed())
			target := u.Host
			u.Host = proxyAddr
			stop := make(chan struct{})
			DeferCleanup(func() { close(stop) })
			go func() {
				time.Sleep(1500 * time.Millisecond) // the database "comes up"
				proxy(proxyAddr, target, stop)
			}()
			s := c.serve("--database-url", u.String(), "--database-wait", "60s")
			Expect(s.stderr.String()).To(ContainSubstring("waiting for the database"))
			Expect(s.stderr.String()).To(ContainSubstring("the database answers"))
			Expect(s.stop()).To(Succeed())
		})
	})

	Describe("listeners and TLS", func() {
		It("refuses an address in use before it opens the database, naming SWITCHBOARD_LISTEN", func() {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			Expect(err).NotTo(HaveOccurred())
			defer ln.Close()
			err, logs := serveErr("--listen", ln.Addr().String())
			Expect(err).To(MatchError(SatisfyAll(ContainSubstring("SWITCHBOARD_LISTEN / --listen"), ContainSubstring("address already in use"))))
			Expect(c.dbPath()).NotTo(BeAnExistingFile(), "no database opened, no migration, no worker")
			Expect(logs).NotTo(ContainSubstring("applied migration"))
		})

		It("refuses a plain listener address in use, naming SWITCHBOARD_PLAIN_LISTEN", func() {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			Expect(err).NotTo(HaveOccurred())
			defer ln.Close()
			err, _ = serveErr("--plain-listen", ln.Addr().String())
			Expect(err).To(MatchError(ContainSubstring("SWITCHBOARD_PLAIN_LISTEN / --plain-listen")))
			Expect(c.dbPath()).NotTo(BeAnExistingFile())
		})

		It("refuses a TLS pair it cannot load before it opens the database, naming the settings", func() {
			err, _ := serveErr("--tls-cert", filepath.Join(c.dataDir, "missing.pem"), "--tls-key", filepath.Join(c.dataDir, "missing-key.pem"))
			Expect(err).To(MatchError(SatisfyAll(ContainSubstring("SWITCHBOARD_TLS_CERT"), ContainSubstring("no such file"))))
			Expect(c.dbPath()).NotTo(BeAnExistingFile())
		})

		It("refuses a listen address that is not host:port", func() {
			_, err := serveConfig("--listen", "8443")
			Expect(err).To(MatchError(ContainSubstring("SWITCHBOARD_LISTEN / --listen: \"8443\" is not host:port")))
		})
	})

	It("warns about SWITCHBOARD_ variables that no setting reads, suggesting the one meant", func() {
		setenv("SWITCHBOARD_LISTNE", "0.0.0.0:8443")
		setenv("SWITCHBOARD_WHATEVER", "x")
		var stderr bytes.Buffer
		Expect(run(context.Background(), []string{"project", "list", "--data-dir", c.dataDir}, io.Discard, &stderr)).To(Succeed())
		lines := logLines(stderr.String())
		Expect(lines).To(ContainElement(SatisfyAll(HaveKeyWithValue("level", "WARN"),
			HaveKeyWithValue("msg", "SWITCHBOARD_LISTNE is not a setting and is ignored (did you mean SWITCHBOARD_LISTEN?)"))))
		Expect(lines).To(ContainElement(HaveKeyWithValue("msg", "SWITCHBOARD_WHATEVER is not a setting and is ignored")))
	})

	Describe("the configuration file and _FILE variables", func() {
		write := func(name, content string) string {
			p := filepath.Join(c.dataDir, name)
			Expect(os.WriteFile(p, []byte(content), 0o600)).To(Succeed())
			return p
		}

		It("reads settings from --config, under variables and flags", func() {
			file := write("switchboard.yaml", "listen: 0.0.0.0:9443\nrate_limit: 5\nauto_migrate: false\n"+
				"trusted_proxies: [10.0.0.0/8, 192.168.0.0/16]\nwebhook_allow_private: true\npublic_url: https://sms.example.com\n")
			cfg, err := serveConfig("--config", file)
			Expect(err).NotTo(HaveOccurred())
			Expect(cfg.Listen).To(Equal("0.0.0.0:9443"))
			Expect(cfg.RateLimit).To(BeEquivalentTo(5))
			Expect(cfg.AutoMigrate).To(BeFalse())
			Expect(cfg.WebhookAllowPrivate).To(BeTrue())
			Expect(cfg.TrustedProxies).To(HaveLen(2))
			Expect(cfg.PublicURL).To(Equal("https://sms.example.com"))

			setenv("SWITCHBOARD_RATE_LIMIT", "7")
			setenv("SWITCHBOARD_CONFIG", file)
			cfg, err = serveConfig("--listen", "127.0.0.1:7443")
			Expect(err).NotTo(HaveOccurred())
			Expect(cfg.RateLimit).To(BeEquivalentTo(7), "a variable wins over the file")
			Expect(cfg.Listen).To(Equal("127.0.0.1:7443"), "a flag wins over both")
		})

		It("refuses a key that is not a setting, suggesting the one meant, and a bad value naming where it came from", func() {
			_, err := serveConfig("--config", write("typo.yaml", "lisen: 0.0.0.0:8443\n"))
			Expect(err).To(MatchError(SatisfyAll(ContainSubstring(`"lisen" is not a setting`), ContainSubstring("did you mean listen?"))))
			_, err = serveConfig("--config", write("bad.yaml", "rate_burst: lots\n"))
			Expect(err).To(MatchError(SatisfyAll(ContainSubstring("SWITCHBOARD_RATE_BURST"), ContainSubstring("rate_burst in "),
				ContainSubstring(`"lots" is not an integer`))))
			_, err = serveConfig("--config", filepath.Join(c.dataDir, "missing.yaml"))
			Expect(err).To(MatchError(ContainSubstring("--config")))
		})

		It("reads a secret from its _FILE variable, without its trailing newline, never from a flag", func() {
			setenv("SWITCHBOARD_CARRIER", "twilio")
			setenv("SWITCHBOARD_TWILIO_ACCOUNT_SID", "AC0123456789abcdef0123456789abcdef")
			setenv("SWITCHBOARD_TWILIO_AUTH_TOKEN_FILE", write("token", "from-a-file\n"))
			cfg, err := serveConfig()
			Expect(err).NotTo(HaveOccurred())
			Expect(cfg.Twilio.AuthToken).To(Equal("from-a-file"))

			setenv("SWITCHBOARD_TWILIO_AUTH_TOKEN", "from-the-environment")
			_, err = serveConfig()
			Expect(err).To(MatchError(ContainSubstring("SWITCHBOARD_TWILIO_AUTH_TOKEN and SWITCHBOARD_TWILIO_AUTH_TOKEN_FILE are both set")))

			_, err = serveConfig("--twilio-auth-token", "x")
			Expect(err).To(MatchError(ContainSubstring("unknown flag: --twilio-auth-token")))
		})

		It("reads a secret from the configuration file", func() {
			file := write("sb.yaml", "carrier: smpp\nsmpp_addr: smsc.example:2775\nsmpp_system_id: acme\nsmpp_password: pw\n")
			cfg, err := serveConfig("--config", file)
			Expect(err).NotTo(HaveOccurred())
			Expect(cfg.SMPP.Password).To(Equal("pw"))
		})
	})
})

// runAsNobody runs the command's static build in a child process as the user nobody (uid
// 65534), in a directory of its own that nobody may enter; argsIn makes the arguments in that
// directory. It returns the command's error output as an error.
func runAsNobody(argsIn func(dir string) []string) error {
	dir, err := os.MkdirTemp("", "sb-nobody-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	Expect(os.Chmod(dir, 0o755)).To(Succeed())
	cmd := exec.Command(staticBinary(), argsIn(dir)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return &plainError{msg: stderr.String(), err: err}
	}
	return nil
}

var (
	staticOnce sync.Once
	staticPath string
)

// staticBinary builds the command as make build does (CGO_ENABLED=0), once per suite run, into a
// directory anyone may read, and returns its path.
func staticBinary() string {
	staticOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sb-static-")
		Expect(err).NotTo(HaveOccurred())
		Expect(os.Chmod(dir, 0o755)).To(Succeed())
		staticPath = filepath.Join(dir, "switchboard")
		build := exec.Command("go", "build", "-trimpath", "-o", staticPath, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
	})
	return staticPath
}

// freshPostgres creates an empty PostgreSQL database for one spec (dropped after it) and returns
// its URL; it skips the spec without SWITCHBOARD_TEST_DATABASE_URL.
func freshPostgres(ctx context.Context) string {
	admin := os.Getenv(store.TestDatabaseEnv)
	if admin == "" {
		Skip("needs PostgreSQL: set " + store.TestDatabaseEnv + " (make test does)")
	}
	adm, err := store.Open(ctx, store.Config{URL: admin, MaxOpenConns: 1})
	Expect(err).NotTo(HaveOccurred())
	name := "sbcfg_" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000000"), ".", ""))
	Expect(adm.DB().Exec("CREATE DATABASE " + name).Error).To(Succeed())
	DeferCleanup(func() {
		_ = adm.DB().Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)").Error
		_ = adm.Close()
	})
	u, err := url.Parse(admin)
	Expect(err).NotTo(HaveOccurred())
	u.Path = "/" + name
	return u.String()
}

// proxy forwards TCP connections from listen to target until stop is closed.
func proxy(listen, target string, stop <-chan struct{}) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return // the spec then fails waiting for the database
	}
	go func() { <-stop; _ = ln.Close() }()
	for {
		in, err := ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", target)
		if err != nil {
			_ = in.Close()
			continue
		}
		go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
		go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
	}
}
