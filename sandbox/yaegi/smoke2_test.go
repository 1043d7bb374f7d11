package yaegi

import (
	"encoding/json"
	"time"

	"github.com/artifactforge/forge/sandbox"
)

func sandboxSource(c string) sandbox.Source { return sandbox.Source{Code: c} }
func sandboxInput(a string) sandbox.Input {
	return sandbox.Input{Args: json.RawMessage(a), Limits: sandbox.Limits{Timeout: 300 * time.Millisecond}}
}
