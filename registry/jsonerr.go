package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// trailingData is the problem of a contract followed by more JSON.
const trailingData = "trailing data after the contract object: give one JSON object, nothing after its closing }"

// contractExample is the smallest contract, shown wherever a contract's JSON cannot be read.
const contractExample = `{"role": "text", "purpose": "string utilities", "methods": {"upper": "func Upper(s string) string"}}`

// fieldExamples show, for the fields a contract's writer most often gives the wrong JSON type,
// what the field takes.
var fieldExamples = map[string]string{
	"methods":      `"methods": {"upper": "func Upper(s string) string"} (method name to Go signature)`,
	"capabilities": `"capabilities": {"log": true, "http": {"allow": ["api.example.com"]}}`,
	"acceptance":   `"acceptance": {"examples": [{"method": "upper", "args": {"s": "go"}, "expect": "GO"}]}`,
	"limits":       `"limits": {"timeout": "2s", "memory": "256MB"}`,
	"docs":         `"docs": {"upper": {"description": "Upper-cases a text.", "params": {"s": "the text"}}}`,
}

// contractJSONProblem turns what encoding/json said about a contract's bytes into a problem its
// writer can act on: where the JSON breaks (line and column), or which field has the wrong JSON
// type and what that field takes, never Go's type names. data is the whole contract.
func contractJSONProblem(data []byte, err error) Problem {
	var te *json.UnmarshalTypeError
	switch {
	case len(bytes.TrimSpace(data)) == 0:
		return Problem{Message: "the contract is empty: write one JSON object, e.g. " + contractExample}
	case errors.As(err, &te):
		got := "a JSON " + strings.Fields(te.Value + " value")[0]
		if te.Field == "" {
			return Problem{Message: fmt.Sprintf("a contract is a JSON object, got %s: write one object, e.g. %s", got, contractExample)}
		}
		msg := fmt.Sprintf("%s: got %s, want %s", te.Field, got, jsonKind(te.Type))
		if ex, ok := fieldExamples[te.Field]; ok {
			msg += ", e.g. " + ex
		}
		return Problem{Field: te.Field, Message: msg}
	}
	msg := JSONErrText(err)
	if json.Valid(data) { // not the JSON's fault (e.g. an unknown field, which the caller refused)
		return Problem{Message: msg}
	}
	if pos, _ := JSONSyntaxPos(data); pos != "" {
		msg += " (at " + pos + ")"
	}
	if m := JSONMistake(data); m != "" {
		msg += ": " + m
	}
	return Problem{Message: "the contract is not valid JSON: " + msg + "; write one JSON object, e.g. " + contractExample}
}

// jsonKind names the JSON a Go type is decoded from.
func jsonKind(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a JSON value"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 { // json.RawMessage: any value
			return "a JSON value"
		}
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a JSON value"
}

// JSONSyntaxPos returns the line and column (1-based) of the byte where data stops being JSON
// (for input that ends too early, its last byte) and the decoder's error; no position for an
// error that is not about syntax. Every edge reports malformed JSON with it.
func JSONSyntaxPos(data []byte) (string, error) {
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return "", err
	}
	idx := int(se.Offset) - 1 // Offset counts the byte that broke the syntax
	if trimmed := len(bytes.TrimRight(data, " \t\r\n")); idx >= trimmed {
		idx = trimmed - 1 // ends early: point at the last byte there is
	}
	line, col := 1, 1
	for _, b := range data[:max(idx, 0)] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("line %d, column %d", line, col), err
}

// JSONMistake names the usual slip behind data not being JSON, when it is one: a byte-order mark
// (an editor's UTF-8 "with BOM"), a comma before a closing bracket, single quotes, or "" when
// none of these.
func JSONMistake(data []byte) string {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return "it starts with a byte-order mark; save it as UTF-8 without one"
	}
	var v any
	var se *json.SyntaxError
	if !errors.As(json.Unmarshal(data, &v), &se) || se.Offset < 1 || int(se.Offset) > len(data) {
		return ""
	}
	switch at := data[se.Offset-1]; {
	case at == '\'':
		return "JSON strings and keys take double quotes"
	case at == '}' || at == ']':
		if before := bytes.TrimRight(data[:se.Offset-1], " \t\r\n"); bytes.HasSuffix(before, []byte(",")) {
			return fmt.Sprintf("JSON takes no comma before a closing %c", at)
		}
	}
	return ""
}

// JSONSyntaxWhere says where data, which is not valid JSON, goes wrong and the usual slip behind
// it if there is one: "line L, column C: what[; slip]" ("valid JSON" when it is).
func JSONSyntaxWhere(data []byte) string {
	pos, err := JSONSyntaxPos(data)
	switch {
	case err == nil:
		return "valid JSON"
	case pos == "":
		return err.Error()
	}
	if m := JSONMistake(data); m != "" {
		return pos + ": " + err.Error() + "; " + m
	}
	return pos + ": " + err.Error()
}

// maxEchoedName bounds the field name a JSON error repeats back to whoever sent the JSON.
const maxEchoedName = 64

// JSONErrText is a JSON decoding error's text for a reply: encoding/json's unknown-field error
// repeats the field's name whole, any length (a 1 MB key is a 1 MB error, in the reply, the log
// and the events); the name is cut to maxEchoedName bytes, saying how much was left out.
func JSONErrText(err error) string {
	msg := err.Error()
	const unknown = `json: unknown field "`
	i := strings.Index(msg, unknown)
	if i < 0 {
		return msg
	}
	rest := msg[i+len(unknown):]
	end := strings.LastIndexByte(rest, '"')
	if end <= maxEchoedName {
		return msg
	}
	return msg[:i+len(unknown)] + cutName(rest[:end]) + fmt.Sprintf(`…" (a field name of %d bytes)`, end) + rest[end+1:]
}

// cutName is name's first maxEchoedName bytes, whole runes.
func cutName(name string) string {
	cut := min(maxEchoedName, len(name))
	for cut > 0 && cut < len(name) && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut]
}

// EchoedName is a name a caller sent (a field, a tool) as an error repeats it: whole up to
// maxEchoedName bytes, else cut, saying its length.
func EchoedName(name string) string {
	if len(name) <= maxEchoedName {
		return name
	}
	return fmt.Sprintf("%s… (%d bytes)", cutName(name), len(name))
}
