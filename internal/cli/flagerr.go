package cli

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/pflag"
)

// plainFlagError rewords the flag parser's error for a value it could not
// read, which names Go's parsing function ("strconv.ParseInt: parsing
// "abc": invalid syntax"), as what the flag wants:
//
//	--token-budget "abc": want a whole number, such as 5000000
//
// Other errors, and values grub's own flag types refused with their own
// words, are returned as they are.
func plainFlagError(err error) error {
	var bad *pflag.InvalidValueError
	if !errors.As(err, &bad) {
		return err
	}
	name := "--" + bad.GetFlag().Name
	want := wantedValue(bad.GetFlag().Value.Type(), err)
	if want == "" {
		return err
	}
	return fmt.Errorf("%s %q: %s", name, bad.GetValue(), want)
}

// wantedValue says in words what a flag of the given pflag type takes,
// or "" when the refusal came with its own words (grub's own flag types).
func wantedValue(typ string, err error) string {
	var num *strconv.NumError
	rangeErr := errors.As(err, &num) && errors.Is(num.Err, strconv.ErrRange)
	switch typ {
	case "int", "int64", "int32":
		if rangeErr {
			return "the number is too large"
		}
		return "want a whole number, such as 25"
	case "uint", "uint64", "uint32":
		if rangeErr {
			return "the number is too large"
		}
		return "want a whole number of 0 or more, such as 25"
	case "float64", "float32":
		return "want a number, such as 2.50"
	case "bool":
		return "want true or false (or the flag alone, for true)"
	case "duration":
		return "want a duration such as 90s, 45m or 2h"
	}
	return ""
}
