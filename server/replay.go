package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

// Safe regeneration over HTTP: the operator's regen and edit verbs take ?accept_changes=1, and two
// endpoints replay an artifact's sample of real calls (forge.Forge.ReplaySample, Diff):
//
//	POST /v1/artifacts/{role}/{method}/replay  body {"gen": N}            (optional; 0: current)
//	POST /v1/artifacts/{role}/{method}/diff    body {"from": N, "to": M}  (optional; previous vs current)
//
// Both run stored code in the sandbox, so they take the guards of /v1/call (a JSON POST, which
// no page on another site can send unasked) and, beyond them, the admin token: a replay runs
// every sampled input (up to 256, twice for a diff) for one request, and its answer shows the
// inputs and answers other callers sent, which a client of a role must not read.

// replayRoutes mounts the replay and diff endpoints.
func (s *Server) replayRoutes() {
	s.mux.HandleFunc("POST /v1/artifacts/{role}/{method}/replay", s.admin(s.handleReplay))
	s.mux.HandleFunc("POST /v1/artifacts/{role}/{method}/diff", s.admin(s.handleDiff))
}

// acceptChanges: the operator's regen or edit verb accepts new code that changes answers of the
// sample of real calls (?accept_changes=1; forge's safe regeneration).
func acceptChanges(r *http.Request) bool {
	v := r.URL.Query().Get("accept_changes")
	return v == "1" || v == "true"
}

// replayRequest is the optional JSON body of the replay and diff endpoints.
type replayRequest struct {
	Gen  int `json:"gen"`
	From int `json:"from"`
	To   int `json:"to"`
}

// replayBody reads the optional body; false when the response is written.
func (s *Server) replayBody(w http.ResponseWriter, r *http.Request) (replayRequest, bool) {
	var q replayRequest
	body, ok := s.readBody(w, r)
	if !ok {
		return q, false
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return q, true
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&q); err != nil || q.Gen < 0 || q.From < 0 || q.To < 0 {
		writeErr(w, http.StatusBadRequest, "args", fmt.Sprintf(`the body is not a replay request: send {"gen": N} to /replay or {"from": N, "to": M} to /diff (generation numbers; empty body: the current one, or the previous and the current one)%s`, errSuffix(err)))
		return q, false
	}
	return q, true
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return " (" + registry.JSONErrText(err) + ")"
}

// replayResult is the replay endpoint's answer.
type replayResult struct {
	OK bool `json:"ok"`
	*forge.Replay
}

// diffResult is the diff endpoint's answer.
type diffResult struct {
	OK bool `json:"ok"`
	*forge.DiffReport
}

func (s *Server) handleReplay(w http.ResponseWriter, r *http.Request) {
	s.replayed(w, r, func(ctx context.Context, q replayRequest) (any, error) {
		rep, err := s.f.ReplaySample(ctx, r.PathValue("role"), r.PathValue("method"), q.Gen)
		return replayResult{OK: true, Replay: rep}, err
	})
}

func (s *Server) handleDiff(w http.ResponseWriter, r *http.Request) {
	s.replayed(w, r, func(ctx context.Context, q replayRequest) (any, error) {
		d, err := s.f.Diff(ctx, r.PathValue("role"), r.PathValue("method"), q.From, q.To)
		return diffResult{OK: true, DiffReport: d}, err
	})
}

// replayed reads the request, runs fn within the call timeout and writes its answer or error.
func (s *Server) replayed(w http.ResponseWriter, r *http.Request, fn func(context.Context, replayRequest) (any, error)) {
	q, ok := s.replayBody(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.o.CallTimeout)
	defer cancel()
	v, err := fn(ctx, q)
	if err != nil {
		replayErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// replayErr maps a replay's or diff's error to a response.
func replayErr(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, forge.ErrNoSample), errors.Is(err, registry.ErrNoGeneration):
		writeErr(w, http.StatusConflict, forge.TypeRefused, err.Error())
	case errors.Is(err, registry.ErrNotFound), errors.Is(err, registry.ErrInvalidName):
		storeErr(w, err)
	default:
		writeErr(w, http.StatusUnprocessableEntity, forge.TypeRefused, err.Error())
	}
}
