package server

import "net/http"

// acceptChanges: the operator's regen or edit verb accepts new code that changes answers of the
// sample of real calls (?accept_changes=1; forge's safe regeneration).
func acceptChanges(r *http.Request) bool {
	v := r.URL.Query().Get("accept_changes")
	return v == "1" || v == "true"
}
