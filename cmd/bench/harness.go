package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/switchboard/switchboard/carriers"
	"github.com/switchboard/switchboard/carriers/sim"
	"github.com/switchboard/switchboard/server"
	"github.com/switchboard/switchboard/service"
)

// apiServer is the real Switchboard API serving TLS on a loopback port, with its job workers
// running, and a project and live key to call it with.
type apiServer struct {
	// URL is https://127.0.0.1:<port>.
	URL string
	// Client trusts the server's self-signed certificate and keeps a connection per worker.
	Client *http.Client
	// ProjectID and Key are the caller's project and live API key secret.
	ProjectID, Key string
	// Core is the domain behind the API, for scenarios that look past HTTP (outbox, jobs).
	Core *service.Core

	api     *server.Server
	workers interface{ Stop(context.Context) error }
	stop    context.CancelFunc
	done    chan error
}

// apiConfig tunes the API a scenario starts. The zero value suits the api scenario.
type apiConfig struct {
	// Pacing is each sender number's rate (service.CoreConfig.Pacing). Zero: unpaced.
	Pacing service.Pacing
	// SimLatency is the simulated carrier's delay before a receipt. Zero: at once.
	SimLatency time.Duration
}

// startAPI wires the API as `switchboard serve` does (service.NewCore with the simulated carrier,
// job workers, server.New, Serve) over db on 127.0.0.1:0, with a self-signed certificate
// generated into db.Dir and rate limiting disabled, the components' too (the bench would otherwise
// measure the limiters' 429s). The server logs warnings and errors to stderr only.
func (b *Bench) startAPI(ctx context.Context, db *Database, cfg apiConfig) (*apiServer, error) {
	certFile, keyFile, _, err := server.EnsureSelfSignedCert(filepath.Join(db.Dir, "tls"))
	if err != nil {
		return nil, err
	}
	client, err := b.newClient(certFile)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	latency := cfg.SimLatency
	if latency == 0 {
		latency = -1 // at once, in sim.Config's terms
	}
	st := db.Store
	core, err := service.NewCore(service.CoreConfig{
		Store: st, PublicURL: "https://127.0.0.1", Logger: log, Pacing: cfg.Pacing,
		Carriers: func(r carriers.Reporter) ([]carriers.Carrier, error) {
			c, err := sim.New(sim.Config{Store: st.Sim(), Reporter: r, Latency: latency, Logger: log})
			return []carriers.Carrier{c}, err
		},
	})
	if err != nil {
		return nil, err
	}
	api, err := server.New(server.Config{Core: core, Logger: log, RateLimit: -1, Embed: server.EmbedConfig{RateLimit: -1}})
	if err != nil {
		return nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	s := &apiServer{Client: client, Core: core, api: api, stop: stop, done: make(chan error, 1)}
	workers, err := core.StartWorkers(sctx)
	if err != nil {
		stop()
		_ = api.Close(context.Background())
		return nil, err
	}
	s.workers = workers
	ready := make(chan string, 1)
	go func() {
		s.done <- api.Serve(sctx, server.ListenConfig{Addr: "127.0.0.1:0", CertFile: certFile, KeyFile: keyFile},
			func(addr, _ string) { ready <- addr })
	}()
	select {
	case addr := <-ready:
		s.URL = "https://" + addr
	case err := <-s.done:
		s.done <- err
		s.Close()
		return nil, fmt.Errorf("serve: %w", err)
	}

	p, err := st.CreateProject(ctx, "bench")
	if err == nil {
		s.ProjectID = p.ID
		_, s.Key, err = st.CreateAPIKey(ctx, p.ID, false)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close stops the server (idle connections first, so shutdown is immediate), writes the API logs
// it still buffers, and stops the job workers.
func (s *apiServer) Close() {
	s.Client.CloseIdleConnections()
	s.stop()
	if err := <-s.done; err != nil {
		fmt.Fprintln(os.Stderr, "bench: serve:", err)
	}
	_ = s.api.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.workers.Stop(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "bench: stop job workers:", err)
	}
}

// newClient returns the load generator's client: HTTP/1.1 with keep-alive over TLS, trusting
// certFile, with an idle connection kept for every worker so that steady state has no handshakes.
func (b *Bench) newClient(certFile string) (*http.Client, error) {
	pem, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, errors.New("bench: no certificate in " + certFile)
	}
	conc := b.opts.Concurrency
	return &http.Client{
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout: 5 * time.Second,
			MaxIdleConns:        conc * 2,
			MaxIdleConnsPerHost: conc * 2,
			IdleConnTimeout:     90 * time.Second,
			// A custom TLS config without ForceAttemptHTTP2 speaks HTTP/1.1: one connection per
			// worker, as most API clients and load generators do.
		},
		Timeout: b.opts.Timeout,
	}, nil
}

// baselineServer is a bare Echo instance with one GET route answering 200 "{}", served over TLS
// with the same settings as server.Serve: the ceiling that TLS, net/http, Echo and the client
// impose on this machine, against which the API's figures are read.
type baselineServer struct {
	URL    string
	Client *http.Client
	srv    *http.Server
	done   chan error
}

func (b *Bench) startBaseline(dir string) (*baselineServer, error) {
	certFile, keyFile, _, err := server.EnsureSelfSignedCert(filepath.Join(dir, "tls"))
	if err != nil {
		return nil, err
	}
	client, err := b.newClient(certFile)
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.GET("/", func(c echo.Context) error { return c.JSONBlob(http.StatusOK, []byte("{}")) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{
		Handler:           e,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	s := &baselineServer{URL: "https://" + ln.Addr().String() + "/", Client: client, srv: srv, done: make(chan error, 1)}
	go func() { s.done <- srv.ServeTLS(ln, "", "") }()
	return s, nil
}

func (s *baselineServer) Close() {
	s.Client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	if err := <-s.done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "bench: baseline server:", err)
	}
}

// call does one request and reads the whole answer; a non-2xx answer is a *StatusError. When out
// is non-nil a 2xx body is decoded into it.
func call(ctx context.Context, c *http.Client, method, url, key string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &StatusError{Status: resp.StatusCode, Body: string(data)}
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}
