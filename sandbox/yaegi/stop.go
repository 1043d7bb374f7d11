package yaegi

import (
	_ "unsafe" // go:linkname

	"github.com/traefik/yaegi/interp"
)

// stopInterpreter stops every execution of in, at once and for good: yaegi's own
// (*Interpreter).stop, which ExecuteWithContext calls when its context is done. It bumps the
// interpreter's run id, which every interpreted frame compares with its own before each step
// (a frame of a stopped run returns without executing anything more, also one entered later
// through a function value), and closes the interpreter's done channel, which every blocking
// channel operation and select of the guest also waits on.
//
// yaegi v0.16.1 offers no other way to stop a run than a context given to ExecuteWithContext,
// whose execution then runs on a goroutine of its own that the caller waits for; calling a
// function value of the interpreter directly (see instance.call) needs the stop itself. The
// linkname is checked at link time: a yaegi without this method does not build (go.mod pins
// v0.16.1; TestStopInterpreter and the hostile corpus check the behaviour).
//
// Run ids and the done channel are set up by the last ExecuteWithContext (the program's load)
// and the last Execute (callFunc); nothing runs ExecuteWithContext on a program's interpreter
// after that, so the channel closed here is the one its frames hold. Call it at most once per
// interpreter (callCtx.cancel does): a second close panics.
//
//go:linkname stopInterpreter github.com/traefik/yaegi/interp.(*Interpreter).stop
func stopInterpreter(in *interp.Interpreter)
