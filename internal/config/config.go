package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Kind is the kind of value a key takes, as its flag does.
type Kind int

// The kinds of value, each with the TOML type a file writes it in.
const (
	String   Kind = iota // a string
	Bool                 // true or false
	Int                  // an integer
	Float                // a number: 5 or 12.50
	Duration             // a string holding a Go duration: "90s", "45m", "2h"
	List                 // an array of strings (a repeatable flag)
)

// Expected says what a key of kind k takes, for error messages.
func (k Kind) Expected() string {
	switch k {
	case Bool:
		return "true or false"
	case Int:
		return "an integer, e.g. 40"
	case Float:
		return "a number, e.g. 5 or 12.50"
	case Duration:
		return `a duration in quotes, e.g. "90s", "45m" or "2h"`
	case List:
		return `an array of strings, e.g. ["a", "b"]`
	}
	return `a string in quotes, e.g. "text"`
}

// Keys are the keys a file may hold and the kind of value each takes.
type Keys map[string]Kind

// WorkspaceFile is the workspace's defaults file, relative to its root.
const WorkspaceFile = ".grub/config.toml"

// UserFile returns the user's defaults file and the name to show it by
// ("~/.config/grub/config.toml" when it is under $HOME): in
// $XDG_CONFIG_HOME when that is an absolute path, else in ~/.config. Both
// are empty when neither variable gives a place.
func UserFile(getenv func(string) string) (path, name string) {
	home := getenv("HOME")
	dir := getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) {
		if !filepath.IsAbs(home) {
			return "", ""
		}
		dir = filepath.Join(home, ".config")
	}
	path = filepath.Join(dir, "grub", "config.toml")
	name = path
	if filepath.IsAbs(home) {
		if rel, err := filepath.Rel(home, path); err == nil && !strings.HasPrefix(rel, "..") {
			name = "~/" + filepath.ToSlash(rel)
		}
	}
	return path, name
}

// Setting is one key of a file.
type Setting struct {
	Key string
	// Values is the value in its flag's text form ("45m", "true", "40");
	// a List has one element per string, possibly none.
	Values []string
	Line   int
}

// File is a defaults file as read.
type File struct {
	// Name is how messages and grub config show the file.
	Name     string
	Settings []Setting // in the order of the file
	// Path is where Load read the file; SHA256 is the hex digest of the
	// bytes read, which are the bytes parsed (trust is given to them).
	Path, SHA256 string
}

// Without returns a copy of f without the settings of the keys drop
// names.
func (f *File) Without(drop func(key string) bool) *File {
	c := *f
	c.Settings = slices.DeleteFunc(slices.Clone(f.Settings), func(s Setting) bool { return drop(s.Key) })
	return &c
}

// Lookup returns the setting of key, if the file has it.
func (f *File) Lookup(key string) (Setting, bool) {
	if f == nil {
		return Setting{}, false
	}
	for _, s := range f.Settings {
		if s.Key == key {
			return s, true
		}
	}
	return Setting{}, false
}

// Error is a problem in a defaults file. Line is 0 when the problem is
// with the file as a whole (it cannot be read); Key is empty when the
// problem is not with one key (the file is not TOML).
type Error struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ": %s", e.Key)
	}
	return b.String() + ": " + e.Msg
}

// Load reads the file at path and parses it. A file that does not exist
// (or whose folder is a file: others report that) is no file: nil and no
// error.
func Load(path, name string, keys Keys) (*File, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, &Error{File: name, Msg: fmt.Sprintf("cannot read it: %v", unwrapPath(err))}
	}
	f, err := Parse(data, name, keys)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(data)
	f.Path, f.SHA256 = path, hex.EncodeToString(sum[:])
	return f, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Parse checks data, a file named name, against keys and returns its
// settings.
func Parse(data []byte, name string, keys Keys) (*File, error) {
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, _ := de.Position()
			return nil, &Error{File: name, Line: line, Msg: "not valid TOML: " + strings.TrimPrefix(de.Error(), "toml: ")}
		}
		return nil, &Error{File: name, Msg: "not valid TOML: " + err.Error()}
	}
	f := &File{Name: name}
	p := unstable.Parser{}
	p.Reset(data)
	for p.NextExpression() {
		n := p.Expression()
		line := p.Shape(n.Raw).Start.Line
		switch n.Kind {
		case unstable.KeyValue:
			key := joinKey(n.Key())
			s, err := setting(key, doc[key], keys)
			if err != nil {
				err.File, err.Line = name, line
				return nil, err
			}
			s.Line = line
			f.Settings = append(f.Settings, s)
		case unstable.Table, unstable.ArrayTable:
			it := n.Key()
			it.Next()
			return nil, &Error{File: name, Line: p.Shape(it.Node().Raw).Start.Line, Key: "[" + joinKey(n.Key()) + "]",
				Msg: "tables are not used: write each key at the top of the file, named like its flag (model = \"…\", max-iter = 40)"}
		}
	}
	if err := p.Error(); err != nil { // toml.Unmarshal has already refused what the parser would
		return nil, &Error{File: name, Msg: "not valid TOML: " + err.Error()}
	}
	return f, nil
}

func joinKey(it unstable.Iterator) string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return strings.Join(parts, ".")
}

// setting checks one key and its decoded value against keys.
func setting(key string, v any, keys Keys) (Setting, *Error) {
	kind, ok := keys[key]
	if !ok {
		msg := "unknown key: keys are the long flags of grub start"
		if near := closest(key, keys); near != "" {
			msg = fmt.Sprintf("unknown key; did you mean %s? (keys are the long flags of grub start)", near)
		}
		return Setting{}, &Error{Key: key, Msg: msg}
	}
	bad := func() (Setting, *Error) {
		return Setting{}, &Error{Key: key, Msg: fmt.Sprintf("expected %s, got %s", kind.Expected(), describe(v))}
	}
	s := Setting{Key: key}
	switch kind {
	case String, Duration:
		str, ok := v.(string)
		if !ok {
			return bad()
		}
		s.Values = []string{str}
	case Bool:
		b, ok := v.(bool)
		if !ok {
			return bad()
		}
		s.Values = []string{strconv.FormatBool(b)}
	case Int:
		i, ok := v.(int64)
		if !ok {
			return bad()
		}
		s.Values = []string{strconv.FormatInt(i, 10)}
	case Float:
		switch x := v.(type) {
		case int64:
			s.Values = []string{strconv.FormatInt(x, 10)}
		case float64:
			s.Values = []string{strconv.FormatFloat(x, 'g', -1, 64)}
		default:
			return bad()
		}
	case List:
		arr, ok := v.([]any)
		if !ok {
			return bad()
		}
		s.Values = []string{}
		for _, e := range arr {
			str, ok := e.(string)
			if !ok {
				return bad()
			}
			s.Values = append(s.Values, str)
		}
	}
	return s, nil
}

// describe names the TOML type of a decoded value, with the value when it
// is short.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			return "a string"
		}
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("the boolean %t", x)
	case int64:
		return fmt.Sprintf("the integer %d", x)
	case float64:
		return fmt.Sprintf("the number %v", x)
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("a date or time (%v)", v)
}

// closest returns the key nearest to key, if one is near enough to be
// what was meant.
func closest(key string, keys Keys) string {
	best, bestD := "", len(key)/2+2
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if d := distance(strings.ToLower(key), k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
