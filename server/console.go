package server

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/artifactforge/forge/forge"
	"github.com/artifactforge/forge/registry"
	"github.com/artifactforge/forge/server/ui"
)

// The operator console (issue 28): static files at /ui (package ui), and the public endpoints it
// reads besides the others (/v1/stats, /v1/events, /v1/artifacts/{role}/{method}, /v1/roles/...):
//
//	GET  /v1/artifact-table?sort=calls&desc=1&q=TEXT&lifecycle=L&offset=0&limit=100
//	                                           one page of the artifact table (forge.ArtifactTable)
//	GET  /v1/artifacts/{role}/{method}/activity?since=24h&buckets=48&failures=20
//	                                           counters over time and recent failures (forge.Activity)
//	GET  /v1/quarantine                        the files the store set aside as damaged
//	POST /v1/admin/restore/{id}                put one back (forge.RestoreQuarantined); admin token
//	POST /v1/admin/dismiss/{id}                resolve it, keeping the store as it is; admin token
//
// Decisions (what a row holds, the order, the buckets) are package forge's; this file encodes.

func (s *Server) consoleRoutes() {
	s.mux.HandleFunc("GET /v1/artifact-table", s.handleArtifactTable)
	s.mux.HandleFunc("GET /v1/artifacts/{role}/{method}/activity", s.handleActivity)
	s.mux.HandleFunc("GET /v1/quarantine", s.handleStoreQuarantine)
	s.mux.HandleFunc("POST /v1/admin/restore/{id}", s.admin(s.handleRestore))
	s.mux.HandleFunc("POST /v1/admin/dismiss/{id}", s.admin(s.handleDismiss))
	s.mux.Handle("GET /ui/", http.StripPrefix("/ui", ui.Handler()))
	s.mux.Handle("GET /ui", ui.Secure(http.RedirectHandler("/ui/", http.StatusMovedPermanently)))
}

// intParam reads a query parameter that is a whole number, def when absent.
func intParam(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q is not a whole number", name, v)
	}
	return n, nil
}

func (s *Server) handleArtifactTable(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	tq := forge.TableQuery{Sort: q.Get("sort"), Desc: q.Get("desc") == "1" || q.Get("desc") == "true", Search: q.Get("q"), Lifecycle: q.Get("lifecycle")}
	var err error
	if tq.Offset, err = intParam(r, "offset", 0); err == nil {
		tq.Limit, err = intParam(r, "limit", forge.DefaultTableLimit)
	}
	if err == nil {
		err = tq.Check()
	}
	if err != nil {
		writeErr(w, http.StatusBadRequest, "args", err.Error())
		return
	}
	p, err := s.f.ArtifactTable(tq)
	if err != nil {
		storeErr(w, err)
		return
	}
	if !s.operator(r) { // a client of every role: no client's failure text
		for i := range p.Rows {
			p.Rows[i].LastFailureReason = forge.FailureReasonFor(r.Context(), p.Rows[i].LastFailureReason)
		}
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) handleActivity(w http.ResponseWriter, r *http.Request) {
	span := 24 * time.Hour
	if v := r.URL.Query().Get("since"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			writeErr(w, http.StatusBadRequest, "args", fmt.Sprintf("since=%q is not a duration (write e.g. 24h)", v))
			return
		}
		span = d
	}
	buckets, err := intParam(r, "buckets", forge.DefaultActivityBuckets)
	var failures int
	if err == nil {
		failures, err = intParam(r, "failures", forge.DefaultActivityFailures)
	}
	if err != nil {
		writeErr(w, http.StatusBadRequest, "args", err.Error())
		return
	}
	a, err := s.f.Activity(r.PathValue("role"), r.PathValue("method"), span, buckets, failures)
	if err != nil {
		storeErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func (s *Server) handleStoreQuarantine(w http.ResponseWriter, _ *http.Request) {
	q, err := s.f.StoreQuarantine()
	if err != nil {
		maintainerErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, q)
}

func (s *Server) handleRestore(w http.ResponseWriter, r *http.Request) {
	rr, err := s.f.RestoreQuarantined(r.Context(), r.PathValue("id"))
	if err != nil {
		maintainerErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rr)
}

func (s *Server) handleDismiss(w http.ResponseWriter, r *http.Request) {
	ent, err := s.f.DismissQuarantined(r.Context(), r.PathValue("id"))
	if err != nil {
		maintainerErr(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ent)
}

// maintainerErr answers a failed store-maintenance request: a backend without it is 501.
func maintainerErr(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, registry.ErrUnsupported):
		writeErr(w, http.StatusNotImplemented, "store", err.Error())
		return
	case errors.Is(err, registry.ErrNoQuarantine):
		writeErr(w, http.StatusNotFound, forge.TypeNotFound, err.Error()+" (GET /v1/quarantine lists the pending ones)")
		return
	}
	storeErr(w, err)
}
