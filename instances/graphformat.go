package instances

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/graph/topo"
)

// GraphFormatV1 is the value of the "format" field of a graph file (docs/graph-format.md).
const GraphFormatV1 = "memsched.graph/v1"

var (
	graphTopFields  = fieldSet{known: []string{"format", "name", "units", "fixed", "nodes"}, required: []string{"format", "nodes"}}
	graphNodeFields = fieldSet{known: []string{"name", "cost", "size", "temp", "deps"}, required: []string{"name", "size"}}
)

// ReadGraph reads a graph in format memsched.graph/v1 from rd; source names the input in
// errors. Nodes may be listed in any order consistent with their dependencies or not: the
// loader orders them topologically (gonum's stabilized sort, keeping the file's order wherever
// the edges allow) and rejects a cycle, naming its nodes. Sizes become int64 bytes, times
// float64 seconds, with the units of the chain format. Every rejection is a *FormatError.
func ReadGraph(rd io.Reader, source string) (*Graph, error) {
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
	if err := r.format(doc, GraphFormatV1); err != nil {
		return nil, err
	}
	top, err := r.object(doc, "", graphTopFields)
	if err != nil {
		return nil, err
	}
	format, err := r.str(top, "format", "")
	if err != nil {
		return nil, err
	}
	if format != GraphFormatV1 {
		return nil, r.fail("format", strconv.Quote(format), "unknown format (want %q)", GraphFormatV1)
	}
	g := &Graph{}
	if g.Name, err = r.str(top, "name", ""); err != nil {
		return nil, err
	}
	if err := r.units(top); err != nil {
		return nil, err
	}
	if g.Fixed, err = r.size(top, "fixed", "", 0); err != nil {
		return nil, err
	}
	list, ok := top["nodes"].([]any)
	if !ok {
		return nil, r.fail("nodes", describe(top["nodes"]), "must be an array of nodes")
	}
	if len(list) == 0 {
		return nil, r.fail("nodes", "[]", "a graph needs at least one node")
	}
	nodes := make([]Node, len(list))
	depNames := make([][]any, len(list))
	index := make(map[string]int, len(list))
	for i, raw := range list {
		path := fmt.Sprintf("nodes[%d]", i)
		obj, err := r.object(raw, path, graphNodeFields)
		if err != nil {
			return nil, err
		}
		n := &nodes[i]
		if n.Name, err = r.str(obj, "name", path); err != nil {
			return nil, err
		}
		if n.Name == "" {
			return nil, r.fail(path+".name", `""`, "must not be empty")
		}
		if j, dup := index[n.Name]; dup {
			return nil, r.fail(path+".name", strconv.Quote(n.Name), "duplicate name (also nodes[%d])", j)
		}
		index[n.Name] = i
		if n.Cost, err = r.time(obj, "cost", path); err != nil {
			return nil, err
		}
		if n.Size, err = r.size(obj, "size", path, -1); err != nil {
			return nil, err
		}
		if n.Temp, err = r.size(obj, "temp", path, 0); err != nil {
			return nil, err
		}
		if raw, ok := obj["deps"]; ok {
			if depNames[i], ok = raw.([]any); !ok {
				return nil, r.fail(path+".deps", describe(raw), "must be an array of node names")
			}
		}
	}
	deps := make([][]int, len(list))
	for i, ds := range depNames {
		for k, raw := range ds {
			path := fmt.Sprintf("nodes[%d].deps[%d]", i, k)
			name, ok := raw.(string)
			if !ok {
				return nil, r.fail(path, describe(raw), "must be a node name (a string)")
			}
			j, ok := index[name]
			if !ok {
				return nil, r.fail(path, strconv.Quote(name), "no node has this name")
			}
			if j == i {
				return nil, r.fail(path, strconv.Quote(name), "a node cannot depend on itself")
			}
			for _, e := range deps[i] {
				if e == j {
					return nil, r.fail(path, strconv.Quote(name), "repeated dependency")
				}
			}
			deps[i] = append(deps[i], j)
		}
	}
	order, err := topoOrder(len(nodes), deps)
	if err != nil {
		var cyc topo.Unorderable
		if errors.As(err, &cyc) && len(cyc) > 0 {
			var names []string
			for _, v := range cyc[0] {
				names = append(names, strconv.Quote(nodes[v.ID()].Name))
			}
			sort.Strings(names)
			return nil, r.fail("nodes", strings.Join(names, ", "), "dependency cycle through these nodes")
		}
		return nil, r.fail("nodes", "", "%v", err)
	}
	pos := make([]int, len(order))
	for k, i := range order {
		pos[i] = k
	}
	g.Nodes = make([]Node, len(order))
	for k, i := range order {
		n := nodes[i]
		n.Deps = nil
		for _, d := range deps[i] {
			n.Deps = append(n.Deps, pos[d])
		}
		g.Nodes[k] = n
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return g, nil
}

// LoadGraph reads a graph file (format memsched.graph/v1).
func LoadGraph(path string) (*Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("instances: %w", err)
	}
	defer f.Close()
	return ReadGraph(f, path)
}

type graphJSON struct {
	Format string     `json:"format"`
	Name   string     `json:"name,omitempty"`
	Units  unitsJSON  `json:"units"`
	Fixed  int64      `json:"fixed"`
	Nodes  []nodeJSON `json:"nodes"`
}

type nodeJSON struct {
	Name string   `json:"name"`
	Cost float64  `json:"cost"`
	Size int64    `json:"size"`
	Temp int64    `json:"temp"`
	Deps []string `json:"deps"`
}

// WriteGraph writes g in format memsched.graph/v1, in bytes and seconds, nodes in g's order.
// It fails if g does not validate.
func WriteGraph(w io.Writer, g *Graph) error {
	if err := g.Validate(); err != nil {
		return err
	}
	out := graphJSON{Format: GraphFormatV1, Name: g.Name, Units: unitsJSON{"B", "s"}, Fixed: g.Fixed}
	for _, n := range g.Nodes {
		nj := nodeJSON{Name: n.Name, Cost: n.Cost, Size: n.Size, Temp: n.Temp, Deps: []string{}}
		for _, d := range n.Deps {
			nj.Deps = append(nj.Deps, g.Nodes[d].Name)
		}
		out.Nodes = append(out.Nodes, nj)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
