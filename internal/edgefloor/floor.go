// Package edgefloor is the floor the HTTP edge is measured against: what any JSON-over-HTTP
// service does for a call (decode the args, compute, encode an answer), with no forge in it.
// `make bench-http` (internal/benchhttp) serves it beside `forge serve`; server's
// BenchmarkEdgeHandler runs it in process beside the server's handler.
package edgefloor

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Handler answers {"s":"hello"} with {"ok":true,"value":"HELLO"}, as a warm text.upper does.
func Handler(w http.ResponseWriter, r *http.Request) {
	var args struct {
		S string `json:"s"`
	}
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(struct {
		OK    bool   `json:"ok"`
		Value string `json:"value"`
	}{true, strings.ToUpper(args.S)})
}
