package instances

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// FormatV1 is the value of the "format" field of a chain file (docs/format.md).
const FormatV1 = "memsched.chain/v1"

// MaxFileSize is the largest chain file ReadChain accepts (64 MiB).
const MaxFileSize = 64 << 20

// FormatError is a rejected chain file: the file, the JSON path of the offending value
// (e.g. "stages[3].abar"), the value as written and why it was rejected.
type FormatError struct {
	File  string
	Path  string
	Value string
	Msg   string
}

func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Path != "" {
		b.WriteString(": " + e.Path)
	}
	if e.Value != "" {
		b.WriteString(": " + e.Value)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// chainFields lists, for each object of the format, its known fields (anything else is
// rejected) and which of them are required.
var (
	topFields   = fieldSet{known: []string{"format", "name", "units", "input", "stages"}, required: []string{"format", "input", "stages"}}
	unitFields  = fieldSet{known: []string{"memory", "time"}}
	inputFields = fieldSet{known: []string{"a", "delta"}, required: []string{"a"}}
	stageFields = fieldSet{known: []string{"name", "uf", "ub", "a", "abar", "delta", "of", "ob", "w"}, required: []string{"uf", "ub", "a"}}
)

type fieldSet struct{ known, required []string }

// reader decodes one file, remembering its name for errors.
type reader struct {
	file     string
	memUnit  float64
	timeUnit float64
}

func (r *reader) fail(path, value, format string, args ...any) error {
	return &FormatError{File: r.file, Path: path, Value: value, Msg: fmt.Sprintf(format, args...)}
}

// ReadChain reads a chain in format memsched.chain/v1 from rd; source names the input in
// errors (a file name, or "<stdin>"). Sizes become int64 bytes (rounded to the nearest byte),
// times float64 seconds. Every rejection is a *FormatError naming source, JSON path and value.
func ReadChain(rd io.Reader, source string) (*Chain, error) {
	r := &reader{file: source}
	data, err := io.ReadAll(io.LimitReader(rd, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if len(data) > MaxFileSize {
		return nil, r.fail("", "", "file larger than %d bytes (64 MiB)", MaxFileSize)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, r.fail("", "", "invalid JSON: %v", jsonErr(data, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, r.fail("", "", "trailing data after the JSON object (at byte %d)", dec.InputOffset())
	}
	if err := r.format(doc, FormatV1); err != nil {
		return nil, err
	}
	top, err := r.object(doc, "", topFields)
	if err != nil {
		return nil, err
	}
	c := &Chain{}
	format, err := r.str(top, "format", "")
	if err != nil {
		return nil, err
	}
	if format != FormatV1 {
		return nil, r.fail("format", strconv.Quote(format), "unknown format (want %q)", FormatV1)
	}
	if c.Name, err = r.str(top, "name", ""); err != nil {
		return nil, err
	}
	if err := r.units(top); err != nil {
		return nil, err
	}
	in, err := r.object(top["input"], "input", inputFields)
	if err != nil {
		return nil, err
	}
	if c.A0, err = r.size(in, "a", "input", -1); err != nil {
		return nil, err
	}
	if c.Delta0, err = r.size(in, "delta", "input", c.A0); err != nil {
		return nil, err
	}
	list, ok := top["stages"].([]any)
	if !ok {
		return nil, r.fail("stages", describe(top["stages"]), "must be an array of stages")
	}
	if len(list) == 0 {
		return nil, r.fail("stages", "[]", "a chain needs at least one stage (the last one is the loss stage)")
	}
	for i, raw := range list {
		path := fmt.Sprintf("stages[%d]", i)
		obj, err := r.object(raw, path, stageFields)
		if err != nil {
			return nil, err
		}
		s, err := r.stage(obj, path)
		if err != nil {
			return nil, err
		}
		c.Stages = append(c.Stages, s)
	}
	if err := c.validate(source); err != nil {
		return nil, err
	}
	return c, nil
}

func (r *reader) units(top map[string]any) error {
	r.memUnit, r.timeUnit = 1, 1
	raw, ok := top["units"]
	if !ok {
		return nil
	}
	u, err := r.object(raw, "units", unitFields)
	if err != nil {
		return err
	}
	if m, err := r.str(u, "memory", "units"); err != nil {
		return err
	} else if m != "" {
		if r.memUnit, ok = memoryUnits[m]; !ok {
			return r.fail("units.memory", strconv.Quote(m), "unknown memory unit (want %s)", memoryUnitList())
		}
	}
	if t, err := r.str(u, "time", "units"); err != nil {
		return err
	} else if t != "" {
		if r.timeUnit, ok = timeUnits[t]; !ok {
			return r.fail("units.time", strconv.Quote(t), "unknown time unit (want s, ms or us)")
		}
	}
	return nil
}

func (r *reader) stage(obj map[string]any, path string) (Stage, error) {
	var s Stage
	var err error
	if s.Name, err = r.str(obj, "name", path); err != nil {
		return s, err
	}
	if s.UF, err = r.time(obj, "uf", path); err != nil {
		return s, err
	}
	if s.UB, err = r.time(obj, "ub", path); err != nil {
		return s, err
	}
	if s.A, err = r.size(obj, "a", path, -1); err != nil {
		return s, err
	}
	if s.ABar, err = r.size(obj, "abar", path, s.A); err != nil {
		return s, err
	}
	if s.Delta, err = r.size(obj, "delta", path, s.A); err != nil {
		return s, err
	}
	if s.OF, err = r.size(obj, "of", path, 0); err != nil {
		return s, err
	}
	if s.OB, err = r.size(obj, "ob", path, 0); err != nil {
		return s, err
	}
	if s.W, err = r.size(obj, "w", path, 0); err != nil {
		return s, err
	}
	if s.ABar < s.A {
		return s, r.fail(join(path, "abar"), fmtNumber(obj["abar"]), "is smaller than a (%s): ā includes a (SPEC §1)", fmtNumber(obj["a"]))
	}
	return s, nil
}

// format rejects a document whose "format" names another format (a graph given for a chain,
// or the reverse) before its fields are checked, so that the error names the format rather
// than the first field the other format does not know.
func (r *reader) format(doc any, want string) error {
	obj, _ := doc.(map[string]any)
	if f, ok := obj["format"].(string); ok && f != want {
		return r.fail("format", strconv.Quote(f), "unknown format (want %q)", want)
	}
	return nil
}

// object checks that v is a JSON object with only known fields and every required one.
func (r *reader) object(v any, path string, fs fieldSet) (map[string]any, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		where := path
		if where == "" {
			where = "(top level)"
		}
		return nil, r.fail(where, describe(v), "must be a JSON object")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !contains(fs.known, k) {
			return nil, r.fail(join(path, k), "", "unknown field (known: %s)", strings.Join(fs.known, ", "))
		}
	}
	for _, k := range fs.required {
		if _, ok := obj[k]; !ok {
			return nil, r.fail(join(path, k), "", "missing required field")
		}
	}
	return obj, nil
}

func (r *reader) str(obj map[string]any, key, path string) (string, error) {
	v, ok := obj[key]
	if !ok {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", r.fail(join(path, key), describe(v), "must be a string")
	}
	return s, nil
}

// number reads a non-negative finite number; def < 0 means the field is required.
func (r *reader) number(obj map[string]any, key, path string) (float64, bool, error) {
	v, ok := obj[key]
	if !ok {
		return 0, false, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, false, r.fail(join(path, key), describe(v), "must be a number")
	}
	x, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, false, r.fail(join(path, key), string(n), "is not a finite number")
	}
	if x < 0 {
		return 0, false, r.fail(join(path, key), string(n), "must not be negative")
	}
	return x, true, nil
}

func (r *reader) size(obj map[string]any, key, path string, def int64) (int64, error) {
	x, ok, err := r.number(obj, key, path)
	if err != nil {
		return 0, err
	}
	if !ok {
		return def, nil
	}
	b, err := toBytes(x, r.memUnit)
	if err != nil {
		return 0, r.fail(join(path, key), fmtNumber(obj[key]), "%v", err)
	}
	return b, nil
}

func (r *reader) time(obj map[string]any, key, path string) (float64, error) {
	x, _, err := r.number(obj, key, path)
	if err != nil {
		return 0, err
	}
	t := x * r.timeUnit
	if math.IsInf(t, 0) {
		return 0, r.fail(join(path, key), fmtNumber(obj[key]), "overflows seconds")
	}
	return t, nil
}

// LoadChain reads a chain file (format memsched.chain/v1).
func LoadChain(path string) (*Chain, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("instances: %w", err)
	}
	defer f.Close()
	return ReadChain(f, path)
}

// Validate checks the semantic rules of the format for a chain built in code: at least one
// stage, non-negative sizes, finite non-negative times, ā ≥ a, and every size and the total of
// all sizes at most MaxBytes (the invariant that lets callers add sizes without overflow).
func (c *Chain) Validate() error { return c.validate(c.Name) }

func (c *Chain) validate(file string) error {
	if file == "" {
		file = "chain"
	}
	bad := func(path, value, msg string) error {
		return &FormatError{File: file, Path: path, Value: value, Msg: msg}
	}
	if len(c.Stages) == 0 {
		return bad("stages", "[]", "a chain needs at least one stage (the last one is the loss stage)")
	}
	if c.A0 < 0 {
		return bad("input.a", strconv.FormatInt(c.A0, 10), "must not be negative")
	}
	if c.Delta0 < 0 {
		return bad("input.delta", strconv.FormatInt(c.Delta0, 10), "must not be negative")
	}
	if c.A0 > MaxBytes {
		return bad("input.a", strconv.FormatInt(c.A0, 10), "is above "+maxBytesText)
	}
	if c.Delta0 > MaxBytes {
		return bad("input.delta", strconv.FormatInt(c.Delta0, 10), "is above "+maxBytesText)
	}
	for i, s := range c.Stages {
		p := fmt.Sprintf("stages[%d].", i)
		for _, f := range []struct {
			name string
			v    int64
		}{{"a", s.A}, {"abar", s.ABar}, {"delta", s.Delta}, {"of", s.OF}, {"ob", s.OB}, {"w", s.W}} {
			if f.v < 0 {
				return bad(p+f.name, strconv.FormatInt(f.v, 10), "must not be negative")
			}
			if f.v > MaxBytes {
				return bad(p+f.name, strconv.FormatInt(f.v, 10), "is above "+maxBytesText)
			}
		}
		for _, f := range []struct {
			name string
			v    float64
		}{{"uf", s.UF}, {"ub", s.UB}} {
			if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
				return bad(p+f.name, strconv.FormatFloat(f.v, 'g', -1, 64), "must be a finite non-negative time")
			}
		}
		if s.ABar < s.A {
			return bad(p+"abar", strconv.FormatInt(s.ABar, 10), fmt.Sprintf("is smaller than a (%d): ā includes a (SPEC §1)", s.A))
		}
	}
	// The total of every size must fit MaxBytes (the invariant everything downstream adds
	// sizes under); name the field at which the running total passes it, and the total.
	total, ok := SumBytes(c.A0, c.Delta0)
	if !ok {
		return bad("input.delta", strconv.FormatInt(c.Delta0, 10), c.totalMsg())
	}
	for i, s := range c.Stages {
		for _, f := range []struct {
			name string
			v    int64
		}{{"a", s.A}, {"abar", s.ABar}, {"delta", s.Delta}, {"of", s.OF}, {"ob", s.OB}, {"w", s.W}} {
			if total, ok = SumBytes(total, f.v); !ok {
				return bad(fmt.Sprintf("stages[%d].%s", i, f.name), strconv.FormatInt(f.v, 10), c.totalMsg())
			}
		}
	}
	return nil
}

// totalMsg says that c's sizes add up to more than MaxBytes.
func (c *Chain) totalMsg() string {
	return fmt.Sprintf("the chain's sizes total %.3g B (input and every stage's a, abar, delta, of, ob, w; the running total passes the limit here), above %s",
		c.floatTotal(), maxBytesText)
}

// chainJSON is the written form: bytes and seconds, every field explicit, so that writing then
// reading is lossless (float64 times are written in shortest round-trip form).
type chainJSON struct {
	Format string      `json:"format"`
	Name   string      `json:"name,omitempty"`
	Units  unitsJSON   `json:"units"`
	Input  inputJSON   `json:"input"`
	Stages []stageJSON `json:"stages"`
}

type unitsJSON struct {
	Memory string `json:"memory"`
	Time   string `json:"time"`
}

type inputJSON struct {
	A     int64 `json:"a"`
	Delta int64 `json:"delta"`
}

type stageJSON struct {
	Name  string  `json:"name,omitempty"`
	UF    float64 `json:"uf"`
	UB    float64 `json:"ub"`
	A     int64   `json:"a"`
	ABar  int64   `json:"abar"`
	Delta int64   `json:"delta"`
	OF    int64   `json:"of"`
	OB    int64   `json:"ob"`
	W     int64   `json:"w"`
}

// WriteChain writes c in format memsched.chain/v1, in bytes and seconds. It fails if c does not
// validate, so that every file memsched writes can be read back.
func WriteChain(w io.Writer, c *Chain) error {
	if err := c.Validate(); err != nil {
		return err
	}
	out := chainJSON{Format: FormatV1, Name: c.Name, Units: unitsJSON{"B", "s"}, Input: inputJSON{c.A0, c.Delta0}}
	for _, s := range c.Stages {
		out.Stages = append(out.Stages, stageJSON(s))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// SaveChain writes c to path (see WriteChain).
func SaveChain(path string, c *Chain) error {
	var buf bytes.Buffer
	if err := WriteChain(&buf, c); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("instances: %w", err)
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func fmtNumber(v any) string {
	if n, ok := v.(json.Number); ok {
		return string(n)
	}
	return describe(v)
}

// describe writes a decoded JSON value briefly for an error message.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	case json.Number:
		return string(x)
	case bool:
		return strconv.FormatBool(x)
	case []any:
		return fmt.Sprintf("an array of %d", len(x))
	case map[string]any:
		return "an object"
	}
	return fmt.Sprint(v)
}

// jsonErr adds a line number to a syntax error.
func jsonErr(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		return fmt.Errorf("line %d: %v", line, se)
	}
	if errors.Is(err, io.EOF) {
		return errors.New("empty input")
	}
	return err
}
