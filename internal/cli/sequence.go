package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/memsched/memsched/schedule"
	"github.com/memsched/memsched/verify"
)

// readInputFile reads the file named by flag (e.g. "--schedule"), or in when path is "-". An
// unreadable file is a usage error naming the flag and the file.
func readInputFile(flag, path string, in io.Reader) ([]byte, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(in)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, usageErrorf("%s %s: %v", flag, path, err)
	}
	return data, nil
}

// scheduleFormat resolves --format auto: json when the first non-blank byte opens a JSON
// object or array, text otherwise.
func scheduleFormat(format string, data []byte) string {
	if format != "auto" {
		return format
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		return "json"
	}
	return "text"
}

// parseSequence reads a rematerialization sequence in any of the forms memsched accepts, the
// one reader of `verify --problem remat --schedule` and `remat --sequence`: the output of
// `memsched remat --json` (its "sequence" key), a bare JSON array of {"op", "stage"}, or the
// text format of docs/verify.md (Fck^1 Fn^2 ... B^1). format is json, text or auto. Every error
// is a usage error naming flag, the file and what is wrong; an empty sequence is one.
func parseSequence(flag, path string, data []byte, format string) (schedule.Sequence, error) {
	var seq schedule.Sequence
	var err error
	if scheduleFormat(format, data) == "json" {
		if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '[' {
			err = json.Unmarshal(t, &seq)
		} else {
			var obj struct {
				Sequence *schedule.Sequence `json:"sequence"`
			}
			if err = json.Unmarshal(data, &obj); err == nil {
				if obj.Sequence == nil {
					err = errors.New(`no "sequence" key (want memsched remat --json output, an array of operations or the text format)`)
				} else {
					seq = *obj.Sequence
				}
			}
		}
	} else {
		seq, err = schedule.ParseSequenceText(bytes.NewReader(data))
	}
	if err == nil && len(seq) == 0 {
		err = errors.New("no operations")
	}
	if err != nil {
		return nil, usageErrorf("%s %s: %v", flag, path, err)
	}
	return seq, nil
}

// strictJSON decodes one JSON value of data into v, refusing fields v does not have (the chain
// format does the same: a misspelt "wiat" is an error naming it, not an operation without
// dependencies) and trailing data.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// present says whether a JSON key was given a value other than null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(bytes.TrimSpace(raw)) != "null"
}

// invalidStep writes a replay error of seq as "step N (OP): reason" (N 1-based), or the error
// itself when it is not about one operation.
func invalidStep(seq schedule.Sequence, err error) string {
	var bad *verify.InvalidOpError
	if !errors.As(err, &bad) {
		return err.Error()
	}
	switch {
	case bad.Index < 0:
		return fmt.Sprintf("before the first operation: %s", bad.Reason)
	case bad.Index < len(seq):
		return fmt.Sprintf("step %d (%s): %s", bad.Index+1, seq[bad.Index], bad.Reason)
	}
	return fmt.Sprintf("after the last operation: %s", bad.Reason)
}
