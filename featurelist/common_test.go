package featurelist

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func naivePrefix(a, b []byte) int {
	i := 0
	for i < min(len(a), len(b)) && a[i] == b[i] {
		i++
	}
	return i
}

func naiveSuffix(a, b []byte) int {
	i := 0
	for i < min(len(a), len(b)) && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// TestCommonPrefixSuffix compares commonPrefix and commonSuffix with a
// byte-by-byte loop on random pairs: equal, empty, one a prefix or suffix
// of the other, differing at the first or last byte, at block edges, in
// several places.
func TestCommonPrefixSuffix(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	check := func(a, b []byte) {
		t.Helper()
		for _, p := range [][2][]byte{{a, b}, {b, a}} {
			if got, want := commonPrefix(p[0], p[1]), naivePrefix(p[0], p[1]); got != want {
				t.Fatalf("commonPrefix = %d, want %d (lengths %d, %d)", got, want, len(p[0]), len(p[1]))
			}
			if got, want := commonSuffix(p[0], p[1]), naiveSuffix(p[0], p[1]); got != want {
				t.Fatalf("commonSuffix = %d, want %d (lengths %d, %d)", got, want, len(p[0]), len(p[1]))
			}
		}
	}
	check(nil, nil)
	check(nil, []byte("a"))
	check([]byte{}, []byte("abc"))
	sizes := []int{0, 1, 7, 8, 9, 63, 64, 65, 511, 512, 513, 4095, 4096, 4097, 4096*3 + 517, 40000}
	for range 3000 {
		n := sizes[r.IntN(len(sizes))]
		if r.IntN(4) == 0 {
			n = r.IntN(20000)
		}
		a := make([]byte, n)
		for i := range a {
			a[i] = "ab"[r.IntN(2)] // a small alphabet: long equal runs after a change
		}
		b := bytes.Clone(a)
		switch r.IntN(6) {
		case 0: // equal
		case 1: // the first or last byte
			if n > 0 {
				b[[]int{0, n - 1}[r.IntN(2)]] ^= 1
			}
		case 2: // a block edge, or next to one
			if n > 0 {
				edge := []int{8, 64, 512, 4096}[r.IntN(4)]*(1+r.IntN(3)) + r.IntN(3) - 1
				b[min(edge, n-1)] ^= 1
			}
		case 3: // cut or extended at either end
			if r.IntN(2) == 0 {
				b = b[r.IntN(n+1):]
			} else {
				b = append(b, a[:r.IntN(n+1)]...)
			}
		default: // a few random changes, inserts and deletions
			for range 1 + r.IntN(3) {
				i := r.IntN(len(b) + 1)
				switch r.IntN(3) {
				case 0:
					if i < len(b) {
						b[i] ^= 1
					}
				case 1:
					b = append(b[:i:i], append([]byte{'c'}, b[i:]...)...)
				default:
					if i < len(b) {
						b = append(b[:i:i], b[i+1:]...)
					}
				}
			}
		}
		check(a, b)
	}
}
