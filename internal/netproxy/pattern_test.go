package netproxy

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParseAllowlistAndMatch(t *testing.T) {
	a, err := ParseAllowlist([]string{"Example.COM.", "*.example.net", "api.example.org:8443", "192.0.2.7", "[2001:db8::1]:22", "::1", "@go"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		host              string
		port              int
		allowed, explicit bool
	}{
		{"example.com", 443, true, true},
		{"example.com", 80, true, true},
		{"example.com", 22, false, false},
		{"www.example.com", 443, false, false},
		{"a.example.net", 443, true, false},
		{"a.b.example.net", 80, true, false},
		{"example.net", 443, false, false},
		{"evil-example.net", 443, false, false},
		{"api.example.org", 8443, true, true},
		{"api.example.org", 443, false, false},
		{"192.0.2.7", 443, true, true},
		{"::ffff:192.0.2.7", 443, true, true},
		{"2001:db8::1", 22, true, true},
		{"2001:db8::1", 443, false, false},
		{"::1", 80, true, true},
		{"proxy.golang.org", 443, true, false},
		{"golang.org", 443, false, false},
	}
	for _, c := range cases {
		h, err := ParseHost(c.host)
		if err != nil {
			t.Fatalf("%s: %v", c.host, err)
		}
		allowed, explicit := a.Match(h, c.port)
		if allowed != c.allowed || explicit != c.explicit {
			t.Errorf("%s:%d: allowed %v explicit %v, want %v %v", c.host, c.port, allowed, explicit, c.allowed, c.explicit)
		}
	}
}

func TestParseAllowlistRefuses(t *testing.T) {
	for p, want := range map[string]string{
		"":                "empty",
		"@nope":           "no such preset",
		"bücher.example":  "punycode",
		"*.":              "empty host name",
		"a..b":            "empty label",
		"example.com:0":   "bad port",
		"example.com:x":   "bad port",
		"example.com:080": "bad port",
		"[::1":            "closing",
		"[::1]x":          "after ]",
		"10.1":            "start with a letter",
		"0x7f.1":          "start with a letter",
		"a.0x7f":          "start with a letter",
		"*":               "not allowed",
		"a/b":             "not allowed",
		"fe80::1%eth0":    "zones",
		"*.*.example.com": "not allowed",
	} {
		err := CheckPattern(p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", p, err, want)
		}
	}
}

func TestPublic(t *testing.T) {
	for s, want := range map[string]bool{
		"203.0.113.5": true, "8.8.8.8": true, "2001:4860::8888": true,
		"127.0.0.1": false, "10.0.0.1": false, "172.16.0.1": false, "192.168.1.1": false,
		"169.254.169.254": false, "0.0.0.0": false, "0.1.2.3": false, "100.64.0.1": false,
		"255.255.255.255": false, "224.0.0.1": false, "::1": false, "::": false, "fe80::1": false,
		"fd00::1": false, "::ffff:127.0.0.1": false, "::ffff:169.254.169.254": false,
		"64:ff9b::a9fe:a9fe": false, "64:ff9b::808:808": true, "2002:7f00:1::": false, "::127.0.0.1": false,
		"fec0::1": false,
	} {
		if got := Public(netip.MustParseAddr(s)); got != want {
			t.Errorf("Public(%s) = %v, want %v", s, got, want)
		}
	}
}

// FuzzParseAllowlist: parsing never panics, and a name or address that
// parses as a host is matched by its own exact pattern, whatever its
// case or trailing dot.
func FuzzParseAllowlist(f *testing.F) {
	for _, s := range []string{"example.com", "*.example.com", "[::1]:8080", "@go", "EXAMPLE.com.:443", "127.0.0.1", "xn--bcher-kva.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		a, err := ParseAllowlist([]string{p})
		if err != nil {
			return
		}
		host, port, err := splitPattern(p)
		if err != nil {
			t.Fatalf("parsed %q but cannot split it: %v", p, err)
		}
		if strings.HasPrefix(host, "*.") || strings.HasPrefix(p, "@") {
			return
		}
		h, err := ParseHost(host)
		if err != nil {
			t.Fatalf("parsed %q but not its host: %v", p, err)
		}
		if port == 0 {
			port = 443
		}
		if ok, explicit := a.Match(h, port); !ok || !explicit {
			t.Fatalf("%q does not match its own host %v:%d", p, h, port)
		}
		if back, err := ParseHost(h.String()); err != nil || back != h {
			t.Fatalf("%q: host %v parses back as %v, %v", p, h, back, err)
		}
	})
}

// FuzzParseHost: a host that parses is normalised (lower case, no
// trailing dot, ASCII) and parses back to itself.
func FuzzParseHost(f *testing.F) {
	for _, s := range []string{"Example.COM.", "::ffff:127.0.0.1", "127.1", "b\xc3\xbccher.de", "a..b", "x_y.example"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHost(s)
		if err != nil {
			return
		}
		if h.Name != "" {
			if h.Name != strings.ToLower(h.Name) || strings.HasSuffix(h.Name, ".") {
				t.Fatalf("%q gave %q", s, h.Name)
			}
			for i := 0; i < len(h.Name); i++ {
				if h.Name[i] >= 0x80 {
					t.Fatalf("%q gave non-ASCII %q", s, h.Name)
				}
			}
		}
		if h.Addr.Is4In6() {
			t.Fatalf("%q gave a mapped address %v", s, h.Addr)
		}
		if back, err := ParseHost(h.String()); err != nil || back != h {
			t.Fatalf("%q: %v parses back as %v, %v", s, h, back, err)
		}
	})
}
