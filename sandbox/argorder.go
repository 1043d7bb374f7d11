package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// OrderArgs maps JSON args (an object by parameter name, or an array by position) onto the
// signature's parameters; a missing, unknown or extra argument is a KindArgs error naming it.
// Every backend orders arguments with it (or AppendArgs), so they accept the same args.
func OrderArgs(sig Signature, raw json.RawMessage) ([]json.RawMessage, error) {
	return AppendArgs(nil, sig, raw)
}

// AppendArgs is OrderArgs reusing buf (its contents are replaced): it slices raw in place (no
// decoding, no copies), which keeps a warm call path free of allocations for its arguments.
func AppendArgs(buf []json.RawMessage, sig Signature, raw json.RawMessage) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	n := len(sig.Params)
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	if !json.Valid(raw) {
		err := json.Unmarshal(raw, new(any))
		return nil, &Error{Kind: KindArgs, Message: "args are not valid JSON: " + err.Error(), Err: err}
	}
	switch raw[0] {
	case '[':
		list := buf[:0]
		for i := skipSpace(raw, 1); raw[i] != ']'; {
			end := skipValue(raw, i)
			list = append(list, raw[i:end])
			i = skipSpace(raw, end)
			if raw[i] == ',' {
				i = skipSpace(raw, i+1)
			}
		}
		if sig.Variadic && len(list) >= n {
			// F(a, xs ...int) called as [a, x1, x2] or [a, [x1, x2]].
			rest := list[n-1:]
			if len(rest) != 1 || rest[0][0] != '[' {
				b, _ := json.Marshal(rest)
				list = append(list[:n-1:n-1], b)
			}
		}
		if len(list) > n {
			return nil, &Error{Kind: KindArgs, Message: fmt.Sprintf("got %d args, %s takes %d %s", len(list), sig.Func, n, paramList(sig))}
		}
		if len(list) < n && !(sig.Variadic && len(list) == n-1) {
			return nil, &Error{Kind: KindArgs, Param: sig.Params[len(list)].Name, Message: fmt.Sprintf("missing argument (got %d of %d)", len(list), n)}
		}
		return sig.checked(list)
	case '{':
		list := buf[:0]
		for range n {
			list = append(list, nil)
		}
		for i := skipSpace(raw, 1); raw[i] != '}'; {
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
			idx := -1
			for j, p := range sig.Params {
				if p.Name == string(key) {
					idx = j
					break
				}
			}
			if idx < 0 {
				return nil, &Error{Kind: KindArgs, Param: string(key), Message: fmt.Sprintf("unknown argument %s; %s takes %s", key, sig.Func, paramList(sig))}
			}
			list[idx] = raw[i:vend]
			i = skipSpace(raw, vend)
			if raw[i] == ',' {
				i = skipSpace(raw, i+1)
			}
		}
		for i, p := range sig.Params {
			if list[i] == nil && !(sig.Variadic && i == n-1) {
				return nil, &Error{Kind: KindArgs, Param: p.Name, Message: fmt.Sprintf("missing argument %s (%s)", p.Name, p.Type)}
			}
		}
		return sig.checked(list)
	}
	if n == 1 {
		return sig.checked(append(buf[:0], raw)) // a bare value for a one-parameter function
	}
	return nil, &Error{Kind: KindArgs, Message: "args must be a JSON object by parameter name or an array by position"}
}

// checked applies the signature's args check (argcheck.go) to the ordered args.
func (sig *Signature) checked(list []json.RawMessage) ([]json.RawMessage, error) {
	if sig.check != nil {
		if err := sig.check.check(sig.Params, list); err != nil {
			return nil, err
		}
	}
	return list, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the offset just past the JSON value at b[i]; b is known to be valid JSON.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(b)
	case '[', '{':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = skipValue(b, j) - 1
			case '[', '{':
				depth++
			case ']', '}':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != ']' && b[j] != '}' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}

func paramList(sig Signature) string {
	parts := make([]string, len(sig.Params))
	for i, p := range sig.Params {
		parts[i] = p.Name + " " + p.Type
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
