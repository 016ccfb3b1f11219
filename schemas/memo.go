package schemas

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
)

// A task's feature list is read again and again: feature-list.json
// after every turn, and by grub status; state.json files written before
// accepted-list.json held a second copy (featureListBaseline). Checking
// 2,000 features against the schema is most of what those reads cost, so
// the validator remembers, by a digest of the decoded value, the feature
// lists it has found valid in this process, and does not check the same
// value again: a state.json whose baseline is a list already found valid
// is checked with the baseline taken as null (the schema's other
// choice), and a feature list found valid before passes at once. Equal
// digests mean equal values, so the answer is the one a full check
// gives; a value never seen is checked in full. Validate also remembers
// the SHA-256 of a feature list's bytes it found valid, so that bytes
// seen before are not even parsed again (the digests share one memo: a
// byte digest and a value digest never collide).

// memoSize bounds the digests kept: the lists a run sees in a row (the
// accepted one, the turn's edit, the one before).
const memoSize = 16

type digest [sha256.Size]byte

var validLists struct {
	sync.Mutex
	seen []digest // oldest first
}

func knownValidList(d digest) bool {
	validLists.Lock()
	defer validLists.Unlock()
	return slices.Contains(validLists.seen, d)
}

func rememberValidList(d digest) {
	validLists.Lock()
	defer validLists.Unlock()
	if slices.Contains(validLists.seen, d) {
		return
	}
	if len(validLists.seen) == memoSize {
		validLists.seen = slices.Delete(validLists.seen, 0, 1)
	}
	validLists.seen = append(validLists.seen, d)
}

// digestOf hashes a decoded JSON value (encoding/json's types, with or
// without UseNumber): every value is tagged with its type and every
// string and container with its length, and object keys are sorted, so
// that two values with the same digest are the same value. Numbers are
// hashed as written (json.Number) or formatted exactly (float64): "1"
// and "1.0" differ, which only costs a full check.
func digestOf(v any) digest {
	return sha256.Sum256(appendValue(nil, v))
}

func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, 'z')
	case bool:
		if x {
			return append(b, 't')
		}
		return append(b, 'f')
	case json.Number:
		return appendString(b, 'n', string(x))
	case float64:
		return appendString(b, 'd', strconv.FormatFloat(x, 'g', -1, 64))
	case string:
		return appendString(b, 's', x)
	case []any:
		b = appendLen(b, 'a', len(x))
		for _, e := range x {
			b = appendValue(b, e)
		}
		return b
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = appendLen(b, 'o', len(x))
		for _, k := range keys {
			b = appendString(b, 'k', k)
			b = appendValue(b, x[k])
		}
		return b
	}
	// Not a type encoding/json decodes to: make the digest unique to
	// this call, so that it matches nothing.
	return appendLen(b, '?', int(uniq.Add(1)))
}

var uniq atomic.Int64

func appendLen(b []byte, tag byte, n int) []byte {
	b = append(b, tag)
	return binary.LittleEndian.AppendUint64(b, uint64(n))
}

func appendString(b []byte, tag byte, s string) []byte {
	return append(appendLen(b, tag, len(s)), s...)
}
