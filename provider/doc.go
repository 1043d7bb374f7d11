// Package provider is Forge's code generators: one small interface, Provider, and the registry
// Open chooses among by a spec string. Each implementation registers itself from its package's
// init (Register: its name, how to configure it, its default prompt ceiling) and this package
// names none of them; forge/all imports the four the CLI ships:
//
//	replay:PATH        a JSON Lines cassette of recorded answers (tests, demos, baselines)
//	openai[:MODEL]     OpenAI-compatible chat completions (OpenAI, Ollama, vLLM, llama.cpp)
//	anthropic[:MODEL]  the Anthropic Messages API
//	command:PROG ARGS  an external program: prompt on stdin, answer on stdout
//
// Every answer is healed (Heal) into one Go file in package artifact, whatever the model
// wrapped it in. Every failure is an *Error whose Kind (unavailable, rate_limited, bad_answer,
// auth, config) is extrinsic: it never counts against an artifact's health.
//
// The shared types are defined in provider/internal/gen, with the helpers the implementations
// share, and re-exported here as aliases.
package provider
