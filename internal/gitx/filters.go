package gitx

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Filters lists the gitattributes lines of the repository that name a
// clean/smudge filter (filter=…, as Git LFS writes them). gitx commits file
// bytes as they are on disk, so in such a repository its commits would
// differ from git's; callers refuse to commit there. It reads the top
// .gitattributes and .git/info/attributes (nested .gitattributes files are
// not read).
func (r *Repo) Filters() ([]string, error) {
	_, st, err := r.open()
	if err != nil {
		return nil, err
	}
	var found []string
	for _, path := range []string{
		filepath.Join(r.root, ".gitattributes"),
		filepath.Join(st.Filesystem().Root(), "info", "attributes"),
	} {
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			for _, attr := range strings.Fields(line)[1:] {
				if strings.HasPrefix(attr, "filter=") {
					found = append(found, line)
					break
				}
			}
		}
	}
	return found, nil
}
