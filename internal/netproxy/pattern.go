package netproxy

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Presets are the names an --allow-domain "@name" stands for: the hosts
// a registry's client fetches from.
var Presets = map[string][]string{
	"go":     {"proxy.golang.org", "sum.golang.org"},
	"npm":    {"registry.npmjs.org"},
	"pypi":   {"pypi.org", "files.pythonhosted.org"},
	"crates": {"crates.io", "index.crates.io", "static.crates.io"},
}

// PresetNames lists the presets, sorted, for messages.
func PresetNames() []string {
	names := make([]string, 0, len(Presets))
	for n := range Presets {
		names = append(names, "@"+n)
	}
	slices.Sort(names)
	return names
}

// ruleKind is what a pattern matches.
type ruleKind int

const (
	ruleName   ruleKind = iota // exactly one host name
	ruleSuffix                 // any name below a domain (*.example.com)
	ruleAddr                   // exactly one IP address
)

// rule is one parsed pattern.
type rule struct {
	kind ruleKind
	name string     // ruleName: the name; ruleSuffix: ".example.com"
	addr netip.Addr // ruleAddr
	// port is the one port the pattern allows; 0: 80 and 443.
	port int
	// preset: the rule comes from a preset, a public registry's host,
	// which is never explicit.
	preset bool
}

// Allowlist is a parsed list of --allow-domain patterns.
type Allowlist struct {
	rules []rule
}

// ParseAllowlist parses patterns, each one of:
//
//   - a host name: example.com (that name only; matched without case and
//     without a trailing dot; internationalised names in punycode,
//     xn--…);
//   - a wildcard: *.example.com (every name below example.com, not
//     example.com itself);
//   - an IP address: 192.0.2.7, 2001:db8::1 or [2001:db8::1];
//   - a preset: @go, @npm, @pypi, @crates (Presets);
//
// each but a preset optionally followed by :PORT. Without a port a
// pattern allows ports 80 and 443; with one, that port only. A name or
// address listed exactly (not through a wildcard or a preset) may reach
// private, loopback and link-local addresses; no other can.
func ParseAllowlist(patterns []string) (*Allowlist, error) {
	a := &Allowlist{}
	for _, p := range patterns {
		if name, ok := strings.CutPrefix(p, "@"); ok {
			hosts, ok := Presets[name]
			if !ok {
				return nil, fmt.Errorf("--allow-domain %q: no such preset (presets: %s)", p, strings.Join(PresetNames(), ", "))
			}
			for _, h := range hosts {
				a.rules = append(a.rules, rule{kind: ruleName, name: h, preset: true})
			}
			continue
		}
		r, err := parsePattern(p)
		if err != nil {
			return nil, fmt.Errorf("--allow-domain %q: %w", p, err)
		}
		a.rules = append(a.rules, r)
	}
	return a, nil
}

// CheckPattern reports whether p is a valid --allow-domain pattern.
func CheckPattern(p string) error {
	_, err := ParseAllowlist([]string{p})
	return err
}

func parsePattern(p string) (rule, error) {
	host, port, err := splitPattern(p)
	if err != nil {
		return rule{}, err
	}
	r := rule{port: port}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		name, err := normalName(rest)
		if err != nil {
			return rule{}, err
		}
		r.kind, r.name = ruleSuffix, "."+name
		return r, nil
	}
	h, err := ParseHost(host)
	if err != nil {
		return rule{}, err
	}
	if h.Addr.IsValid() {
		r.kind, r.addr = ruleAddr, h.Addr
	} else {
		r.kind, r.name = ruleName, h.Name
	}
	return r, nil
}

// splitPattern splits a pattern into its host and port (0: none).
func splitPattern(p string) (string, int, error) {
	if p == "" {
		return "", 0, errors.New("empty pattern")
	}
	if strings.HasPrefix(p, "[") {
		end := strings.IndexByte(p, ']')
		if end < 0 {
			return "", 0, errors.New("no closing ]")
		}
		host, rest := p[1:end], p[end+1:]
		if rest == "" {
			return host, 0, nil
		}
		port, ok := strings.CutPrefix(rest, ":")
		if !ok {
			return "", 0, errors.New("text after ]")
		}
		n, err := parsePort(port)
		return host, n, err
	}
	if strings.Count(p, ":") > 1 { // a bare IPv6 address
		return p, 0, nil
	}
	host, port, ok := strings.Cut(p, ":")
	if !ok {
		return host, 0, nil
	}
	n, err := parsePort(port)
	return host, n, err
}

// parsePort parses a decimal port from 1 to 65535.
func parsePort(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 || s[0] == '+' || s[0] == '0' {
		return 0, fmt.Errorf("bad port %q", s)
	}
	return n, nil
}

// Host is a request's target host, normalised: a lower-case name without
// its trailing dot, or an IP address (IPv4-mapped IPv6 addresses as
// IPv4).
type Host struct {
	Name string     // the name; empty for an address
	Addr netip.Addr // the address; invalid for a name
}

// String is the host as messages and the ledger show it.
func (h Host) String() string {
	if h.Addr.IsValid() {
		return h.Addr.String()
	}
	return h.Name
}

// ParseHost parses the host part of a request target: an IP address
// (IPv6 without its brackets) or a host name. It refuses what a client
// could use to make the proxy and a resolver disagree: zones, non-ASCII
// names (use punycode), empty labels, labels other than letters, digits,
// '-' and '_', and names whose last label does not start with a letter
// (127.1 and 0x7f.1 are addresses to some resolvers).
func ParseHost(s string) (Host, error) {
	if strings.ContainsRune(s, '%') {
		return Host{}, errors.New("zones are not allowed")
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return Host{Addr: a.Unmap()}, nil
	}
	name, err := normalName(s)
	if err != nil {
		return Host{}, err
	}
	return Host{Name: name}, nil
}

// normalName lower-cases a host name, drops one trailing dot and checks
// it.
func normalName(s string) (string, error) {
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return "", errors.New("empty host name")
	}
	if len(s) > 253 {
		return "", errors.New("host name longer than 253 bytes")
	}
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'A' && c <= 'Z':
			b[i] = c + 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		case c >= 0x80:
			return "", errors.New("not ASCII: write internationalised names in punycode (xn--…)")
		default:
			return "", fmt.Errorf("character %q not allowed in a host name", c)
		}
	}
	s = string(b)
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "", errors.New("empty label or label longer than 63 bytes")
		}
	}
	if last := labels[len(labels)-1]; last[0] < 'a' || last[0] > 'z' || strings.HasPrefix(last, "0x") {
		return "", errors.New("the last label must start with a letter (a numeric one is read as an address by some resolvers)")
	}
	return s, nil
}

// Match reports whether the list allows host at port, and whether it
// lists host explicitly (by its exact name or address, not through a
// wildcard or a preset): only an explicit host may reach a private,
// loopback or link-local address.
func (a *Allowlist) Match(h Host, port int) (allowed, explicit bool) {
	if a == nil {
		return false, false
	}
	for _, r := range a.rules {
		if !r.allowsPort(port) || !r.matches(h) {
			continue
		}
		allowed = true
		if r.kind != ruleSuffix && !r.preset {
			return true, true
		}
	}
	return allowed, false
}

func (r rule) allowsPort(port int) bool {
	if r.port == 0 {
		return port == 80 || port == 443
	}
	return port == r.port
}

func (r rule) matches(h Host) bool {
	switch r.kind {
	case ruleAddr:
		return h.Addr.IsValid() && h.Addr == r.addr
	case ruleName:
		return h.Name != "" && h.Name == r.name
	default:
		return h.Name != "" && strings.HasSuffix(h.Name, r.name)
	}
}

// matchesAnyPort reports whether some rule names h at any port, for the
// message of a refused port.
func (a *Allowlist) matchesAnyPort(h Host) bool {
	if a == nil {
		return false
	}
	for _, r := range a.rules {
		if r.matches(h) {
			return true
		}
	}
	return false
}
