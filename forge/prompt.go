package forge

import (
	"github.com/artifactforge/forge/repair"
	"github.com/artifactforge/forge/sandbox"
)

// PromptVersion names the system prompt and the request layout. It is recorded on every
// generation as metadata; it is never a reason to replace a proven artifact.
const PromptVersion = "2026-11-26.system-v3+" + repair.PromptLayout

// systemPrompt is the stable part of every prompt for a role's sandbox backend, first so that
// provider prompt caches hit. A backend adds what it registered as its Prompt (the yaegi
// interpreter: its known gaps).
func systemPrompt(backend string) string {
	b, _ := sandbox.LookupBackend(backend)
	return systemRules + b.Prompt + answerRule
}

const answerRule = `
Answer with the whole file in one fenced go code block and nothing else.
`

const systemRules = `You write one Go source file that implements one method of a Forge role.

Rules for the file:
- It is a single file in "package artifact". It exports the method as a plain typed Go function,
  named in CamelCase after the method (has_close_elements -> HasCloseElements), with the signature
  given below when one is given.
- Results: return T, (T, error) or error. Arguments and results must be JSON-encodable: they arrive
  and leave as JSON.
- Import only pure standard packages: strings, strconv, math, math/bits, sort, slices, maps, unicode,
  unicode/utf8, bytes, encoding/json, encoding/base64, encoding/hex, regexp, time (no Sleep), errors,
  fmt (Sprintf/Errorf; nothing that prints), container/heap, container/list, hash/crc32, crypto/sha256.
  os, net, syscall, unsafe, reflect, runtime, os/exec and cgo are refused, and so are go statements and
  //go: directives.
- The host API is the package "forge/host", usable only when the role's capabilities grant it:
    host.Get(url string) (string, error)
    host.Do(host.Request{Method, URL string; Header map[string]string; Body string}) (host.Response{Status int; Header map[string]string; Body string}, error)
    host.Log(msg string)    host.Logf(format string, args ...any)
    host.Now() time.Time    host.Rand() float64    host.RandIntn(n int) int
    host.Call(role, method string, args any) (resultJSON string, err error)
    host.CallInto(role, method string, args any, out any) error   (decodes the result into out)
  HTTP reaches only the role's allowed hosts, with size and time caps; a status of 400 or more is an error.
- No goroutines, no global mutable state, no printing: return values.
`
