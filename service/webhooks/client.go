package webhooks

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// RefusedTargetError is a connection the SSRF guard refused: the endpoint resolved to an address
// that is not public.
type RefusedTargetError struct{ Addr netip.Addr }

func (e *RefusedTargetError) Error() string {
	return fmt.Sprintf("refused: %s is a private, loopback, link-local or otherwise non-public address", e.Addr)
}

// nonPublic are the address ranges no webhook or attachment fetch may connect to: every entry of
// the IANA IPv4 and IPv6 Special-Purpose Address Registries
// (https://www.iana.org/assignments/iana-ipv4-special-registry,
// https://www.iana.org/assignments/iana-ipv6-special-registry) that is not globally reachable,
// plus multicast and the deprecated ranges that still route somewhere local. Where a registry
// block holds a few globally reachable anycast services (192.0.0.0/24, 2001::/23), the whole
// block is refused: no webhook lives on an anycast service address. Ranges that embed an IPv4
// address (6to4, Teredo, IPv4-mapped and -compatible, local-use NAT64) are refused whole, since
// a tunnel or translator on the way could deliver to the embedded address; the well-known NAT64
// prefix alone is judged by the IPv4 address it embeds (nat64), so that an IPv6-only host behind
// DNS64 still reaches public endpoints.
var nonPublic = []netip.Prefix{
	// IPv4 (RFC 6890 and its updates)
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network" (0.0.0.0/32: this host)
	netip.MustParsePrefix("10.0.0.0/8"),      // private use (RFC 1918)
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space, carrier-grade NAT (RFC 6598)
	netip.MustParsePrefix("127.0.0.0/8"),     // loopback
	netip.MustParsePrefix("169.254.0.0/16"),  // link-local, cloud metadata (169.254.169.254)
	netip.MustParsePrefix("172.16.0.0/12"),   // private use (RFC 1918)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments (DS-Lite, dummy, NAT64 discovery, PCP/TURN anycast)
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation, TEST-NET-1
	netip.MustParsePrefix("192.88.99.0/24"),  // deprecated 6to4 relay anycast (RFC 7526)
	netip.MustParsePrefix("192.168.0.0/16"),  // private use (RFC 1918)
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking (RFC 2544)
	netip.MustParsePrefix("198.51.100.0/24"), // documentation, TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation, TEST-NET-3
	netip.MustParsePrefix("224.0.0.0/4"),     // multicast (its own IANA registry)
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and 255.255.255.255 limited broadcast
	// IPv6 (RFC 6890 and its updates)
	netip.MustParsePrefix("::/128"),          // unspecified
	netip.MustParsePrefix("::1/128"),         // loopback
	netip.MustParsePrefix("::/96"),           // deprecated IPv4-compatible addresses (RFC 4291)
	netip.MustParsePrefix("::ffff:0:0/96"),   // IPv4-mapped
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated (RFC 2765)
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use IPv4/IPv6 translation (RFC 8215)
	netip.MustParsePrefix("100::/64"),        // discard-only (RFC 6666)
	netip.MustParsePrefix("100:0:0:1::/64"),  // dummy IPv6 prefix (RFC 9780)
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments, which hold:
	netip.MustParsePrefix("2001::/32"),       //   Teredo, embeds IPv4 addresses (RFC 4380)
	netip.MustParsePrefix("2001:2::/48"),     //   benchmarking (RFC 5180)
	netip.MustParsePrefix("2001:10::/28"),    //   deprecated ORCHID (RFC 4843)
	netip.MustParsePrefix("2001:20::/28"),    //   ORCHIDv2, identifiers not locators (RFC 7343)
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4, embeds IPv4 addresses (RFC 3056)
	netip.MustParsePrefix("3fff::/20"),       // documentation (RFC 9637)
	netip.MustParsePrefix("5f00::/16"),       // segment routing SIDs (RFC 9602)
	netip.MustParsePrefix("fc00::/7"),        // unique-local (fd00:ec2::254: AWS metadata)
	netip.MustParsePrefix("fe80::/10"),       // link-local
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local (RFC 3879)
	netip.MustParsePrefix("ff00::/8"),        // multicast (its own IANA registry)
}

// nat64 is the well-known NAT64 prefix (RFC 6052), globally reachable in the registry: its
// addresses embed an IPv4 address, which is judged in turn.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// PublicAddr reports whether ip is a public unicast address a webhook may be sent to and an
// attachment fetched from: in none of the nonPublic ranges, and, for the well-known NAT64
// prefix, embedding a public IPv4 address.
func PublicAddr(ip netip.Addr) bool {
	ip = ip.WithZone("")
	if !ip.IsValid() {
		return false
	}
	if nat64.Contains(ip) {
		b := ip.As16()
		return PublicAddr(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// refuseNonPublic is a net.Dialer Control function: it runs for every connection with the
// address actually dialled, after name resolution, so DNS rebinding cannot get around it.
func refuseNonPublic(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("webhooks: dial to %q: %w", address, err)
	}
	if !PublicAddr(ip) {
		return &RefusedTargetError{Addr: ip}
	}
	return nil
}

// NewClient returns the HTTP client deliveries use: no proxy (a proxy would dial on our
// behalf, past the guard), no redirects (a 3xx is a failed attempt), the given timeout per
// attempt, connections kept alive per endpoint, and, unless allowPrivate, the SSRF guard on
// every connection.
func NewClient(allowPrivate bool, timeout time.Duration) *http.Client {
	dialer := newDialer(allowPrivate)
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           dialer.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          512,
			MaxIdleConnsPerHost:   128,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: timeout,
		},
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// newDialer is the dialer of deliveries' connections: with the SSRF guard unless allowPrivate.
func newDialer(allowPrivate bool) *net.Dialer {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = refuseNonPublic
	}
	return dialer
}
