package sandbox

// RelayFD is the file descriptor on which a launcher whose policy has
// NetNamespace and ProxyPort finds its end of the relay (NewRelay): the
// first of exec.Cmd.ExtraFiles.
const RelayFD = 3

// netnsMissing is what the launcher's warning adds when it could not
// make the namespaces p asked for and p wanted a network namespace.
func netnsMissing(p Policy) string {
	if !p.NetNamespace {
		return ""
	}
	return ", and the network is confined by Landlock alone (no network namespace)"
}
