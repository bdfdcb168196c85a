package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/switchboard/switchboard/store"
)

// ListenConfig says where and how the API listens.
type ListenConfig struct {
	// Addr is the TLS listener's host:port. Required.
	Addr string
	// CertFile and KeyFile are the PEM certificate and key. Both required.
	CertFile, KeyFile string
	// PlainAddr, when set, is a plain-HTTP listener. It answers 403 https_required, except to
	// requests from TrustedProxies that carry X-Forwarded-Proto: https (a TLS-terminating proxy).
	PlainAddr string
	// TrustedProxies are the networks of TLS-terminating proxies.
	TrustedProxies []netip.Prefix
	// MaxHeaderBytes bounds a request's header (request line and fields); a larger one answers
	// 431 request_header_too_large. Defaults to 1 MiB.
	MaxHeaderBytes int
	// Listener and PlainListener, when set, are sockets already bound for Addr and PlainAddr:
	// a caller binds them before anything else starts, so that an address in use fails at once.
	Listener, PlainListener net.Listener
}

// handshakeTimeout bounds a TLS handshake and the reading of a request's header.
const handshakeTimeout = 10 * time.Second

// Serve runs the listeners until ctx is canceled, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, cfg ListenConfig, ready func(tlsAddr, plainAddr string)) error {
	cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
	if err != nil {
		closeListeners(cfg.Listener, cfg.PlainListener)
		return fmt.Errorf("server: load TLS certificate: %w", err)
	}
	ln := cfg.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			closeListeners(cfg.PlainListener)
			return fmt.Errorf("server: listen on %s: %w", cfg.Addr, err)
		}
	}
	maxHeader := cfg.MaxHeaderBytes
	if maxHeader <= 0 {
		maxHeader = http.DefaultMaxHeaderBytes
	}
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	tlsServer := s.httpServer(s, maxHeader)
	servers := []*http.Server{tlsServer}
	g, gctx := errgroup.WithContext(ctx)
	// The goroutine holds its own server: servers itself grows below, concurrently.
	g.Go(func() error {
		return tlsServer.Serve(&envelopeListener{Listener: ln, tls: tlsConfig, maxHeader: maxHeader})
	})
	plainAddr := ""
	if pln := cfg.PlainListener; pln != nil || cfg.PlainAddr != "" {
		if pln == nil {
			if pln, err = net.Listen("tcp", cfg.PlainAddr); err != nil {
				_ = ln.Close()
				return fmt.Errorf("server: listen on %s: %w", cfg.PlainAddr, err)
			}
		}
		plainAddr = pln.Addr().String()
		plain := s.httpServer(HTTPSGuard(s, cfg.TrustedProxies), maxHeader)
		servers = append(servers, plain)
		g.Go(func() error { return plain.Serve(&envelopeListener{Listener: pln, maxHeader: maxHeader}) })
	}
	if ready != nil {
		ready(ln.Addr().String(), plainAddr)
	}
	g.Go(func() error {
		<-gctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		for _, srv := range servers {
			_ = srv.Shutdown(sctx)
		}
		return nil
	})
	if err := g.Wait(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// httpServer is the net/http server of a listener. It speaks HTTP/1.1 only: net/http answers
// some requests itself, before any handler runs (a header over maxHeader: 431; a request that
// is not HTTP/1.x: 400, 501, 505), and only over HTTP/1.x can the listener's connections put
// those answers in the error envelope (envelopeConn). Over HTTP/2 the same refusals would leave
// as net/http's plain text. The API's clients (the Surge SDKs, curl, load generators) speak
// HTTP/1.1.
func (s *Server) httpServer(h http.Handler, maxHeader int) *http.Server {
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	srv := &http.Server{
		Handler:           h,
		Protocols:         protocols,
		ReadHeaderTimeout: handshakeTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    maxHeader,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	// A shutdown ends the live streams of the embedded components, which would hold it otherwise.
	srv.RegisterOnShutdown(s.components.endStreams)
	return srv
}

// HTTPSGuard wraps the API for a plain-HTTP listener: only requests relayed by a trusted proxy
// that received them over HTTPS get through; everything else answers 403 https_required.
func HTTPSGuard(next http.Handler, trusted []netip.Prefix) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fromTrustedProxy(r, trusted) && strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", store.NewID("req")) // every response carries one (decisions §1)
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(errorBody{Error: errorObject{Type: "https_required", Message: httpsRequired}})
	})
}

// httpsRequired is the message of https_required.
const httpsRequired = "Use HTTPS: plain HTTP requests are refused."

func fromTrustedProxy(r *http.Request, trusted []netip.Prefix) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	for _, p := range trusted {
		if p.Contains(ip.Unmap()) {
			return true
		}
	}
	return false
}

// EnsureSelfSignedCert returns the paths of a certificate and key in dir, creating a self-signed
// pair for localhost, 127.0.0.1 and ::1 on first use. created reports whether it made them.
func EnsureSelfSignedCert(dir string) (certFile, keyFile string, created bool, err error) {
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if _, err := tls.LoadX509KeyPair(certFile, keyFile); err == nil {
		return certFile, keyFile, false, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", false, fmt.Errorf("server: create TLS directory: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", false, fmt.Errorf("server: generate TLS key: %w", err)
	}
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "Switchboard local", Organization: []string{"Switchboard"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().AddDate(2, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", false, fmt.Errorf("server: create certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", false, fmt.Errorf("server: encode TLS key: %w", err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return "", "", false, fmt.Errorf("server: write certificate: %w", err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return "", "", false, fmt.Errorf("server: write TLS key: %w", err)
	}
	return certFile, keyFile, true, nil
}

// closeListeners closes the listeners given that are not nil.
func closeListeners(ls ...net.Listener) {
	for _, l := range ls {
		if l != nil {
			_ = l.Close()
		}
	}
}
