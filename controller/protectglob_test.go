package controller

import "testing"

func TestMatchProtect(t *testing.T) {
	for _, tc := range []struct {
		pattern, rel string
		want         bool
	}{
		{"**/*_test.go", "a_test.go", true},
		{"**/*_test.go", "x/y/a_test.go", true},
		{"**/*_test.go", "x/y/a.go", false},
		{"**/*_test.go", "x/a_test.go/b.go", false},
		{"*_test.go", "deep/in/a_test.go", true}, // no slash: any folder
		{"tests/**", "tests/a/b.txt", true},
		{"tests/**", "tests", false},
		{"tests/**", "other/tests/a", false},
		{"a/**/b.txt", "a/b.txt", true},
		{"a/**/b.txt", "a/x/y/b.txt", true},
		{"a/**/b.txt", "a/x/y/c.txt", false},
		{"a/*/b.txt", "a/x/y/b.txt", false},
		{"a/**/**/b.txt", "a/b.txt", true},
		{"./spec/*.md", "spec/x.md", true},
		{"spec/*.md", "spec/x.md", true},
		{"spec/*.md", "x/spec/x.md", false},
		{"[", "[", false}, // invalid: matches nothing
	} {
		if got := matchProtect(tc.pattern, tc.rel); got != tc.want {
			t.Errorf("matchProtect(%q, %q) = %v, want %v", tc.pattern, tc.rel, got, tc.want)
		}
	}
}

func TestValidProtect(t *testing.T) {
	for _, p := range []string{"**/*_test.go", "tests/**", "a/[bc]/*.go"} {
		if err := ValidProtect(p); err != nil {
			t.Errorf("ValidProtect(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"", "  ", "/etc/passwd", "../x", "a/../../b", "a/[b"} {
		if err := ValidProtect(p); err == nil {
			t.Errorf("ValidProtect(%q) accepted", p)
		}
	}
}
