package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The container image holds the static binary, CA certificates and an empty data directory,
// and runs as an unprivileged user (Dockerfile). No container engine runs here, so the spec
// builds the same root filesystem in a directory and runs the binary chrooted into it, as that
// user: what the image would run, minus the engine.
var _ = Describe("the static binary in an empty root filesystem", Ordered, func() {
	const uid = 65532
	var root string

	BeforeAll(func() {
		if os.Geteuid() != 0 {
			Skip("chroot needs root")
		}
		var err error
		root, err = os.MkdirTemp("", "sb-rootfs-")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(os.RemoveAll, root)
		Expect(os.Chmod(root, 0o755)).To(Succeed())
		bin, err := os.ReadFile(staticBinary())
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(root, "switchboard"), bin, 0o755)).To(Succeed())
		Expect(os.MkdirAll(filepath.Join(root, "etc/ssl/certs"), 0o755)).To(Succeed())
		if ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt"); err == nil {
			Expect(os.WriteFile(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"), ca, 0o644)).To(Succeed())
		}
		Expect(os.Mkdir(filepath.Join(root, "data"), 0o700)).To(Succeed())
		Expect(os.Chown(filepath.Join(root, "data"), uid, uid)).To(Succeed())
		entries, err := os.ReadDir(root)
		Expect(err).NotTo(HaveOccurred())
		Expect(entries).To(HaveLen(3), "switchboard, etc and data: nothing else")
	})

	// inRoot is the command chrooted into the root filesystem as the image's user, with the
	// image's environment.
	inRoot := func(ctx context.Context, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "/switchboard", args...)
		cmd.Dir = "/"
		cmd.Env = []string{"SWITCHBOARD_DATA_DIR=/data"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		return cmd
	}

	It("prints its version", func(ctx SpecContext) {
		out, err := inRoot(ctx, "version", "--json").Output()
		Expect(err).NotTo(HaveOccurred())
		var v map[string]any
		Expect(json.Unmarshal(out, &v)).To(Succeed(), string(out))
		Expect(v).To(HaveKeyWithValue("schema_version", BeNumerically(">", 0)))
	})

	It("serves on SQLite in its data directory, passes its own health check, and stops on SIGTERM", func(ctx SpecContext) {
		free := func() string {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			Expect(err).NotTo(HaveOccurred())
			defer l.Close()
			return l.Addr().String()
		}
		listen, metrics := free(), free()
		serve := inRoot(context.Background(), "serve", "--listen", listen, "--metrics-listen", metrics)
		var logs bytes.Buffer
		serve.Stderr = &logs
		Expect(serve.Start()).To(Succeed())
		DeferCleanup(func() {
			if serve.ProcessState == nil {
				_ = serve.Process.Kill()
				_ = serve.Wait()
			}
		})
		Eventually(func() error { return inRoot(ctx, "healthcheck", "--listen", listen).Run() }).
			WithTimeout(30*time.Second).WithPolling(200*time.Millisecond).Should(Succeed(), func() string { return logs.String() })

		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the spec's own server
		resp, err := client.Get("https://" + listen + "/readyz")
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		resp, err = http.Get("http://" + metrics + "/metrics")
		Expect(err).NotTo(HaveOccurred())
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		Expect(string(body)).To(ContainSubstring("switchboard_http_requests_total"))
		Expect(filepath.Join(root, "data", "switchboard.db")).To(BeARegularFile())

		Expect(serve.Process.Signal(syscall.SIGTERM)).To(Succeed())
		Expect(serve.Wait()).To(Succeed(), "exit 0 after a graceful stop")
		lines := logLines(logs.String())
		Expect(lines).To(ContainElement(HaveKeyWithValue("msg", "switchboard is serving")))
		Expect(lines).To(ContainElement(HaveKeyWithValue("msg", "shutting down")))
	})
})
