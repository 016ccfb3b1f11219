package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/grub-dev/grub/internal/termsafe"
	"github.com/grub-dev/grub/schemas"
)

// writeJSON is the one way a command prints --json output: v is encoded
// with two-space indentation, checked against the named schema in
// schemas/, and written to w followed by a newline. Output that breaks its
// schema is a bug in grub and is not printed.
func writeJSON(w io.Writer, schema string, v any) error {
	data, err := encodeJSON(schema, v, true)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// encodeJSON encodes v as writeJSON prints it, or on one line when indent
// is false (a line of NDJSON), checked against the named schema, followed
// by a newline.
func encodeJSON(schema string, v any, indent bool) ([]byte, error) {
	var data []byte
	var err error
	if indent {
		data, err = json.MarshalIndent(v, "", "  ")
	} else {
		data, err = json.Marshal(v)
	}
	if err != nil {
		return nil, fmt.Errorf("internal error: encoding %s output: %v", schema, err)
	}
	if err := schemas.Validate(schema, "--json output", data); err != nil {
		// %v, not %w: a broken output document is grub's bug (exit 1), not
		// an invalid harness file (exit 2).
		return nil, fmt.Errorf("internal error: output breaks schemas/%s: %v", schema, err)
	}
	return append(data, '\n'), nil
}

// errorOutput is the JSON object a --json command prints on stdout when it
// fails (schemas/error-output.schema.json), so that a program reading
// stdout can tell a failure from data.
type errorOutput struct {
	Error    string `json:"error"`
	ExitCode int    `json:"exitCode"`
}

// jsonError prints err as an errorOutput on w when asJSON is set and err
// is a failure with a message (not a silent exit code such as --exit-status
// gives), and returns err.
func jsonError(w io.Writer, asJSON bool, err error) error {
	var exitErr *ExitError
	if !asJSON || err == nil || errors.As(err, &exitErr) && exitErr.Err == nil {
		return err
	}
	if werr := writeJSON(w, schemas.ErrorOutput, errorOutput{Error: err.Error(), ExitCode: ExitCode(err)}); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// percent renders used/budget as a whole percentage.
func percent(used, budget int64) string {
	if budget <= 0 {
		return ""
	}
	return fmt.Sprintf("%d%%", used*100/budget)
}

// ago renders how long before now t was: "just now", "5m ago", "3h ago",
// "4d ago".
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	default:
		return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
	}
}

// fieldWriter prints "label  value" lines with aligned values; the lines of
// a multi-line value are indented under the first. Values are printed with
// their control characters escaped (termsafe.Escape): much of what they
// show was written by the agent or the user.
type fieldWriter struct {
	w     io.Writer
	width int
	err   error
}

func (fw *fieldWriter) field(label, value string) {
	if fw.err != nil {
		return
	}
	pad := strings.Repeat(" ", fw.width+2)
	value = termsafe.Escape(value)
	value = strings.ReplaceAll(strings.TrimRight(value, "\n"), "\n", "\n"+pad)
	_, fw.err = fmt.Fprintf(fw.w, "%-*s  %s\n", fw.width, label, value)
}

// oneLine squeezes s onto one line, with control characters escaped
// (termsafe.Line), and cuts it to at most max runes.
func oneLine(s string, max int) string {
	s = termsafe.Line(strings.Join(strings.Fields(s), " "))
	r := []rune(s)
	if max > 0 && len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
