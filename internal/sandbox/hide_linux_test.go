package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// bothStages runs test with the launcher started as Wrap's command line
// (two stages: it makes the namespaces itself) and as grub starts it,
// directly in them (InNamespace: one stage).
func bothStages(t *testing.T, test func(t *testing.T, oneStage bool)) {
	t.Run("two stages", func(t *testing.T) { test(t, false) })
	t.Run("one stage", func(t *testing.T) { test(t, true) })
}

// secret is what every credential file of the tests holds.
const secret = "s3cr3t-credential"

// plantCredentials makes every location of Credentials under home (a
// file in each folder, two matches of cargo's pattern) and returns the
// files made.
func plantCredentials(t *testing.T, home string) []string {
	t.Helper()
	var files []string
	put := func(rel string) {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	for _, c := range Credentials {
		switch {
		case c == ".cargo/credentials*":
			put(".cargo/credentials")
			put(".cargo/credentials.toml")
		case slices.Contains([]string{".docker/config.json", ".netrc", ".git-credentials", ".npmrc", ".pypirc"}, c):
			put(c)
		default:
			put(filepath.Join(c, "key"))
		}
	}
	return files
}

// TestCredentialsHidden: through the launcher no listed credential can
// be read, in either confining mode, while the rest of the home folder
// can; --sandbox-show lets one through.
func TestCredentialsHidden(t *testing.T) { bothStages(t, testCredentialsHidden) }

func testCredentialsHidden(t *testing.T, oneStage bool) {
	requireLandlock(t, MinABIFilesystem)
	requireNamespaces(t)
	f := newFixture(t)
	f.oneStage = oneStage
	files := plantCredentials(t, f.home)
	if err := os.WriteFile(filepath.Join(f.home, ".bashrc"), []byte("plain\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{ModeWorkspaceWrite, ModeReadOnly} {
		p := Policy{Mode: mode, Workspace: f.ws, Hide: CredentialPaths(f.home)}
		for _, file := range files {
			out, _ := f.run(t, p, "cat", file)
			if strings.Contains(out, secret) {
				t.Errorf("%s: read %s: %q", mode, file, out)
			}
		}
		if out, code := f.run(t, p, "cat", filepath.Join(f.home, ".bashrc")); code != 0 || out != "plain\n" {
			t.Errorf("%s: ~/.bashrc: exit %d, %q; want it readable", mode, code, out)
		}
		if out, code := f.run(t, p, "ls", "-A", filepath.Join(f.home, ".ssh")); code != 0 || out != "" {
			t.Errorf("%s: ls ~/.ssh: exit %d, %q; want an empty folder", mode, code, out)
		}
		// One stage: the command is the caller's own child; two: the
		// first stage's.
		out, _ := f.run(t, p, "sh", "-c", "echo $PPID")
		if direct := strings.TrimSpace(out) == strconv.Itoa(os.Getpid()); direct != oneStage {
			t.Errorf("%s: the command's parent is %s (this process: %d); want one stage %v", mode, out, os.Getpid(), oneStage)
		}
	}
	p := Policy{Mode: ModeWorkspaceWrite, Workspace: f.ws, Hide: CredentialPaths(f.home),
		Show: []string{filepath.Join(f.home, ".ssh"), filepath.Join(f.home, ".cargo", "credentials.toml")}}
	for _, rel := range []string{".ssh/key", ".cargo/credentials.toml"} {
		if out, code := f.run(t, p, "cat", filepath.Join(f.home, rel)); code != 0 || !strings.Contains(out, secret) {
			t.Errorf("shown %s: exit %d, %q; want it readable", rel, code, out)
		}
	}
	if out, _ := f.run(t, p, "cat", filepath.Join(f.home, ".cargo", "credentials")); strings.Contains(out, secret) {
		t.Errorf("~/.cargo/credentials was read although only credentials.toml was shown: %q", out)
	}
}

// TestHiddenCannotBeUncovered: with the home folder itself the workspace
// (writable), a command cannot get at a hidden credential by removing,
// moving, unmounting or linking the mask, through /proc, through a
// symbolic link, from a user namespace of its own, or by writing into
// the mask.
func TestHiddenCannotBeUncovered(t *testing.T) { bothStages(t, testHiddenCannotBeUncovered) }

func testHiddenCannotBeUncovered(t *testing.T, oneStage bool) {
	requireLandlock(t, MinABIFilesystem)
	requireNamespaces(t)
	f := newFixture(t)
	f.oneStage = oneStage
	home := f.ws // the workspace is $HOME
	f.env = append(f.env, "HOME="+home)
	plantCredentials(t, home)
	keys := filepath.Join(f.base, "keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(keys, "id"), []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(home, ".gnupg")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(keys, filepath.Join(home, ".gnupg")); err != nil {
		t.Fatal(err)
	}
	// Given twice, and a file inside a hidden folder too.
	hide := append(CredentialPaths(home, home), filepath.Join(home, ".ssh", "key"), home+"/.ssh/")
	p := Policy{Mode: ModeWorkspaceWrite, Workspace: home, Hide: hide}
	tests := []struct{ name, script string }{
		{"read", `cat .ssh/key .netrc`},
		{"remove the mask", `rm -rf .ssh; rm -f .netrc; cat .ssh/key .netrc`},
		{"move the mask aside", `mv .ssh s; mv .netrc n; cat s/key n .ssh/key .netrc`},
		{"move the parent aside", `mv .config c && cat c/gh/key c/grub/key`},
		{"unmount", `umount .ssh; umount -l .netrc; cat .ssh/key .netrc`},
		{"mount over", `mount -t tmpfs none .ssh; cat .ssh/key`},
		{"hard link", `ln .netrc leak; ln .ssh/key leak2; cat leak leak2`},
		{"proc self root", `cat /proc/self/root$HOME/.ssh/key /proc/self/root$HOME/.netrc`},
		{"the parent's root", `cat /proc/$PPID/root$HOME/.ssh/key /proc/$PPID/root$HOME/.netrc`},
		{"the link's target", `cat "` + keys + `/id" .gnupg/id`},
		{"replace the link", `rm .gnupg; ln -s "` + keys + `" .gnupg; cat .gnupg/id`},
		{"write into the mask", `echo ` + secret + ` > .ssh/planted; cat .ssh/planted`},
		{"another home", `HOME=/ cat "$OLDPWD/.ssh/key"; cd / && cat ~/.netrc`},
	}
	if _, err := exec.LookPath("unshare"); err == nil {
		tests = append(tests, struct{ name, script string }{"a user namespace inside",
			`unshare -Urm sh -c 'umount .ssh; umount .netrc; cat .ssh/key .netrc'`})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := f.run(t, p, "sh", "-c", tt.script)
			if strings.Contains(out, secret) || strings.Contains(out, "warning") {
				t.Errorf("output %q: a credential was read, or the launcher warned", out)
			}
		})
	}
	// Nothing of that reached the real files.
	if data, err := os.ReadFile(filepath.Join(home, ".netrc")); err != nil || string(data) != secret+"\n" {
		t.Errorf(".netrc = %q, %v; want it untouched", data, err)
	}
	if _, err := os.Lstat(filepath.Join(home, ".ssh", "planted")); err == nil {
		t.Error("a file was written into the real ~/.ssh")
	}
}
