package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
)

// Knowledge as tools over HTTP (issue 24 item 5), thin over forge.Forge.Recall, Record and
// Confirm: the request's client (its identity when the server has client identities) is the
// provenance of what it records, and the roles it may call are the roles whose prompts its
// lessons may reach.
//
//	GET  /v1/knowledge?q=QUERY&domain=D&min_confidence=0.3&limit=N   recall
//	POST /v1/knowledge          {"content","reasoning","category","domain"}   record
//	POST /v1/knowledge/confirm  {"domain","content"}                          the lesson helped

func (s *Server) knowledgeRoutes() {
	s.mux.HandleFunc("GET /v1/knowledge", s.handleRecall)
	s.mux.HandleFunc("POST /v1/knowledge", s.handleRecord)
	s.mux.HandleFunc("POST /v1/knowledge/confirm", s.handleConfirm)
}

// clientCtx is the request's context with the roles its client may call (every role without
// client identities, or for the operator's token): the lessons it may read and write, and the
// roles it may define.
func (s *Server) clientCtx(r *http.Request) context.Context {
	ctx := r.Context()
	if cs := s.o.Clients; cs != nil {
		if c := cs.Lookup(bearer(r)); c != nil && !c.roles.All {
			return forge.WithClientRoles(ctx, c.roles.Names)
		}
	}
	return ctx
}

// knowledgeErr answers a failed knowledge request.
func knowledgeErr(w http.ResponseWriter, err error) {
	var ke *forge.KnowledgeError
	if errors.As(err, &ke) {
		status := map[string]int{forge.KnowledgeInvalid: http.StatusBadRequest, forge.KnowledgeRefused: http.StatusForbidden,
			forge.KnowledgeNotFound: http.StatusNotFound, forge.KnowledgeOff: http.StatusConflict}[ke.Kind]
		if status == 0 {
			status = http.StatusBadRequest
		}
		writeErr(w, status, ke.Kind, ke.Msg)
		return
	}
	writeErr(w, http.StatusInternalServerError, "knowledge", err.Error())
}

func (s *Server) handleRecall(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := forge.RecallRequest{Query: q.Get("q"), Domain: q.Get("domain")}
	for _, p := range []struct {
		name string
		set  func(string) error
	}{
		{"min_confidence", func(v string) (err error) { req.MinConfidence, err = strconv.ParseFloat(v, 64); return }},
		{"limit", func(v string) (err error) { req.Limit, err = strconv.Atoi(v); return }},
	} {
		if v := q.Get(p.name); v != "" {
			if err := p.set(v); err != nil {
				writeErr(w, http.StatusBadRequest, forge.KnowledgeInvalid, p.name+"="+strconv.Quote(v)+": not a number")
				return
			}
		}
	}
	hits, err := s.f.Recall(s.clientCtx(r), req)
	if err != nil {
		knowledgeErr(w, err)
		return
	}
	if hits == nil {
		hits = []forge.Lesson{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "lessons": hits})
}

// decodeKnowledge reads a JSON request body into v, or answers 400/413.
func (s *Server) decodeKnowledge(w http.ResponseWriter, r *http.Request, v any) bool {
	body, ok := s.readBody(w, r)
	if !ok {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeErr(w, http.StatusBadRequest, forge.KnowledgeInvalid, "the request body is not the JSON object this endpoint takes: "+registry.JSONErrText(err))
		return false
	}
	return true
}

func (s *Server) handleRecord(w http.ResponseWriter, r *http.Request) {
	var req forge.RecordRequest
	if !s.decodeKnowledge(w, r, &req) {
		return
	}
	l, created, err := s.f.Record(s.clientCtx(r), req)
	if err != nil {
		knowledgeErr(w, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, map[string]any{"ok": true, "created": created, "lesson": l})
}

func (s *Server) handleConfirm(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Domain  string `json:"domain"`
		Content string `json:"content"`
	}
	if !s.decodeKnowledge(w, r, &req) {
		return
	}
	l, err := s.f.Confirm(s.clientCtx(r), req.Domain, req.Content)
	if err != nil {
		knowledgeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "lesson": l})
}
