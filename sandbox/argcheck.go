package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// argCheck holds what a signature's parameter schema (Signature.ParamsSchema, the input schema
// MCP publishes) asks of args beyond what decoding them enforces. encoding/json turns a JSON null
// into the zero value of a type that has no null (an int, a string, a struct, an element or field
// of one) and fills a fixed-size array's missing elements with zeros, silently; the schema refuses
// both. Everything else the schema says (a type, an integer's range, a fraction where an integer
// is wanted, base64 for []byte, unknown or missing args) the decoders and AppendArgs refuse
// already, each as a KindArgs error naming the parameter, so this check and the schema agree.
//
// It works on the raw argument slices AppendArgs cut (no decoding, no allocation on success): a
// null is one comparison per argument, and an argument whose schema refuses null somewhere inside
// it is walked only when its bytes contain "null" (or its type has a fixed-size array).
type argCheck struct {
	params []*argNode // by parameter, as Signature.Params
}

// argNode is one place of a parameter's schema.
type argNode struct {
	want     string // the schema's type, for messages ("integer", "object", ...)
	nullable bool   // a JSON null is a value here (pointer, slice, map, interface)
	fixed    int    // the exact number of elements of a fixed-size array, or -1
	items    *argNode
	props    map[string]*argNode // struct fields by JSON name
	values   *argNode            // map values
	// deepNull: a place below this one refuses null; deepFixed: a fixed-size array is at or
	// below this one. Either makes the walk worth its cost.
	deepNull, deepFixed bool
}

// newArgCheck builds the check from the schema fragments of the parameters, in order.
func newArgCheck(props []map[string]any) *argCheck {
	c := &argCheck{params: make([]*argNode, len(props))}
	for i, s := range props {
		c.params[i] = argNodeOf(s)
	}
	return c
}

func argNodeOf(s map[string]any) *argNode {
	n := &argNode{fixed: -1}
	if alts, ok := s["anyOf"].([]any); ok {
		// A pointer: its target's schema or null.
		var inner *argNode
		for _, a := range alts {
			m, _ := a.(map[string]any)
			if m == nil {
				continue
			}
			if m["type"] == "null" {
				n.nullable = true
			} else {
				inner = argNodeOf(m)
			}
		}
		if inner != nil {
			nullable := n.nullable || inner.nullable
			n = inner
			n.nullable = nullable
		}
		return n
	}
	switch t := s["type"].(type) {
	case nil:
		n.nullable = true // {}: any value, null included
	case string:
		n.want = t
	case []string:
		n.want = t[0]
		for _, x := range t {
			n.nullable = n.nullable || x == "null"
		}
	case []any:
		for i, x := range t {
			if str, _ := x.(string); i == 0 {
				n.want = str
			} else if str == "null" {
				n.nullable = true
			}
		}
	}
	if it, ok := s["items"].(map[string]any); ok {
		n.items = argNodeOf(it)
		lo, lok := s["minItems"].(int)
		hi, hok := s["maxItems"].(int)
		if lok && hok && lo == hi {
			n.fixed = lo
		}
	}
	if ps, ok := s["properties"].(map[string]any); ok && n.want == "object" {
		n.props = make(map[string]*argNode, len(ps))
		for k, v := range ps {
			if m, ok := v.(map[string]any); ok {
				n.props[k] = argNodeOf(m)
			}
		}
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		n.values = argNodeOf(ap)
	}
	n.deepFixed = n.fixed >= 0
	for _, c := range n.children() {
		n.deepNull = n.deepNull || !c.nullable || c.deepNull
		n.deepFixed = n.deepFixed || c.deepFixed
	}
	return n
}

func (n *argNode) children() []*argNode {
	var cs []*argNode
	if n.items != nil {
		cs = append(cs, n.items)
	}
	if n.values != nil {
		cs = append(cs, n.values)
	}
	for _, c := range n.props {
		cs = append(cs, c)
	}
	return cs
}

var jsonNull = []byte("null")

// check checks the ordered args (as AppendArgs returns them; a nil entry is an omitted variadic
// parameter) of the parameters params.
func (c *argCheck) check(params []Param, list []json.RawMessage) error {
	for i, raw := range list {
		if raw == nil || i >= len(c.params) || i >= len(params) {
			continue
		}
		n := c.params[i]
		if bytes.Equal(raw, jsonNull) {
			if !n.nullable {
				p := params[i]
				return &Error{Kind: KindArgs, Param: p.Name, Message: fmt.Sprintf("got null for %s %s, which takes no null (its schema: %s)", p.Name, p.Type, n.describe()),
					Hint: fmt.Sprintf("give %s a value of its type; only pointer, slice, map and interface parameters may be null", p.Name)}
			}
			continue
		}
		if (n.deepNull && bytes.Contains(raw, jsonNull)) || n.deepFixed {
			if e := n.walk(raw); e != nil {
				p := params[i]
				return &Error{Kind: KindArgs, Param: p.Name, Message: fmt.Sprintf("%s (%s %s)", e.text(p.Name), p.Name, p.Type),
					Hint: "give every element and field a value of its type (null only where the type is a pointer, slice, map or interface), and a fixed-size array exactly its length"}
			}
		}
	}
	return nil
}

// describe names the node's schema type for a message.
func (n *argNode) describe() string {
	if n.want == "" {
		return "any value"
	}
	return n.want
}

// walkErr is what walk found wrong; its path is built as the walk unwinds (nothing is built
// while the args are fine).
type walkErr struct {
	segs []string // innermost first
	msg  func(path string) string
}

func (e *walkErr) at(seg string) *walkErr {
	e.segs = append(e.segs, seg)
	return e
}

func (e *walkErr) text(param string) string {
	var b strings.Builder
	b.WriteString(param)
	for i := len(e.segs) - 1; i >= 0; i-- {
		b.WriteString(e.segs[i])
	}
	return e.msg(b.String())
}

// walk checks one valid JSON value against n.
func (n *argNode) walk(raw []byte) *walkErr {
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case 'n':
		if !n.nullable {
			return &walkErr{msg: func(path string) string {
				return fmt.Sprintf("got null at %s, which takes no null (its schema: %s)", path, n.describe())
			}}
		}
	case '[':
		if n.items == nil {
			return nil
		}
		look := !n.items.nullable || n.items.deepNull || n.items.deepFixed
		count := 0
		for i := skipSpace(raw, 1); i < len(raw) && raw[i] != ']'; {
			end := skipValue(raw, i)
			if look {
				if e := n.items.walk(raw[i:end]); e != nil {
					return e.at("[" + strconv.Itoa(count) + "]")
				}
			}
			count++
			i = skipSpace(raw, end)
			if i < len(raw) && raw[i] == ',' {
				i = skipSpace(raw, i+1)
			}
		}
		if n.fixed >= 0 && count != n.fixed {
			return &walkErr{msg: func(path string) string {
				return fmt.Sprintf("got %d element(s) at %s, which takes exactly %d", count, path, n.fixed)
			}}
		}
	case '{':
		if n.props == nil && n.values == nil {
			return nil
		}
		for i := skipSpace(raw, 1); i < len(raw) && raw[i] != '}'; {
			kend := skipValue(raw, i)
			key := raw[i+1 : kend-1]
			if bytes.IndexByte(key, '\\') >= 0 {
				var k string
				_ = json.Unmarshal(raw[i:kend], &k)
				key = []byte(k)
			}
			i = skipSpace(raw, kend)
			i = skipSpace(raw, i+1) // ':'
			vend := skipValue(raw, i)
			c := n.values
			if c == nil {
				c = n.field(key)
			}
			if c != nil && (!c.nullable || c.deepNull || c.deepFixed) {
				if e := c.walk(raw[i:vend]); e != nil {
					if n.values != nil {
						return e.at("[" + strconv.Quote(string(key)) + "]")
					}
					return e.at("." + string(key))
				}
			}
			i = skipSpace(raw, vend)
			if i < len(raw) && raw[i] == ',' {
				i = skipSpace(raw, i+1)
			}
		}
	}
	return nil
}

// field finds a struct field by JSON key as encoding/json does: the exact name, else one that
// matches it case-insensitively.
func (n *argNode) field(key []byte) *argNode {
	if c, ok := n.props[string(key)]; ok {
		return c
	}
	for k, c := range n.props {
		if strings.EqualFold(k, string(key)) {
			return c
		}
	}
	return nil
}
