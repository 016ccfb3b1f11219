package netproxy

import "strings"

// proxyVars are the variables that point programs at a proxy, in the
// upper and lower case that different programs read.
var proxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}

// noProxyVars name the hosts a program reaches without the proxy.
var noProxyVars = []string{"NO_PROXY", "no_proxy"}

// Env returns env without any proxy variable it had, followed by
// HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (both cases) set to proxyURL and
// NO_PROXY (both cases) set empty: every program that honours them sends
// everything through the proxy. Other programs fail to connect: the
// sandbox lets them reach the proxy's port only.
func Env(env []string, proxyURL string) []string {
	out := make([]string, 0, len(env)+len(proxyVars)+len(noProxyVars))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !isProxyVar(name) {
			out = append(out, kv)
		}
	}
	return append(out, Vars(proxyURL)...)
}

// Vars are the variables Env sets, for an environment that is added on
// top of another (where a later entry wins).
func Vars(proxyURL string) []string {
	out := make([]string, 0, len(proxyVars)+len(noProxyVars))
	for _, v := range proxyVars {
		out = append(out, v+"="+proxyURL)
	}
	for _, v := range noProxyVars {
		out = append(out, v+"=")
	}
	return out
}

func isProxyVar(name string) bool {
	for _, v := range proxyVars {
		if strings.EqualFold(name, v) {
			return true
		}
	}
	for _, v := range noProxyVars {
		if strings.EqualFold(name, v) {
			return true
		}
	}
	return false
}
