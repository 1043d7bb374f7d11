package server

import (
	"net/http"
	"time"

	"github.com/artifactforge/forge/classifier"
	"github.com/artifactforge/forge/forge"
)

// callStatus is the HTTP status of a call's Outcome, and the Retry-After seconds to send with it
// (0: none). Package forge and the classifier decide what went wrong and whose fault it is (the
// Outcome's type, class and rule); this is the one place that maps that decision to HTTP:
//
//   - an answer is 200, and so is a method's own returned error (caller/returned_answer): the code
//     ran and answered about this input ("unknown unit"), as a function returns an error value;
//   - the caller's errors are 4xx: 404 for a role or method that does not exist (or a name that
//     cannot be one), 409 for an operator verb the artifact's standing refuses, 413 for args larger than the role's caps, 422 for args the code fails on
//     while its other inputs pass (input_repeated, input_specific), 429 with Retry-After for a
//     client that spent its model calls (model_calls), 400 for any other args error;
//   - the rest are 5xx: the artifact's own code failing (intrinsic) 500, upstream data or the
//     contract drifting (adaptive) 502, the world outside failing (extrinsic) 503 with
//     Retry-After when a retry may help, 504 when the caller's deadline ended the call, 502 for a
//     model provider or upstream that refuses (auth, configuration), 503 for a method that is
//     refused by its standing (quarantined, a spent repair budget, a kill switch), 500 for the
//     forge's own failures.
func callStatus(o *forge.Outcome) (status, retryAfter int) {
	if o.OK || o.Err == nil {
		return http.StatusOK, 0
	}
	e := o.Err
	rule := classifier.Rule(e.Rule)
	switch classifier.Class(e.Class) {
	case classifier.Caller:
		switch {
		case e.Type == forge.TypeUnknownRole || e.Type == forge.TypeUnknownMethod:
			return http.StatusNotFound, 0
		case e.Type == forge.TypeRefused:
			return http.StatusConflict, 0 // an operator verb the artifact's standing refuses (nothing to lift)
		case rule == classifier.RuleReturnedAnswer:
			return http.StatusOK, 0
		case rule == classifier.RuleArgsTooLarge:
			return http.StatusRequestEntityTooLarge, 0
		case rule == classifier.RuleInputRepeated || rule == classifier.RuleInputSpecific:
			return http.StatusUnprocessableEntity, 0
		case rule == classifier.RuleClosed:
			return http.StatusServiceUnavailable, 1 // the forge is closing (shutdown)
		case rule == classifier.RuleModelCalls:
			return http.StatusTooManyRequests, max(1, int((e.RetryAfter+time.Second-1)/time.Second))
		}
		return http.StatusBadRequest, 0
	case classifier.Intrinsic:
		return http.StatusInternalServerError, 0
	case classifier.Adaptive:
		return http.StatusBadGateway, 0
	}
	// Extrinsic (and any class this edge does not know).
	switch {
	case e.Retriable:
		secs := 1
		if rule == classifier.RuleProviderRateLimited || rule == classifier.RuleHostHTTP429 {
			secs = 5
		}
		return http.StatusServiceUnavailable, secs
	case rule == classifier.RuleDeadlineCaller:
		return http.StatusGatewayTimeout, 0
	case e.Type == forge.TypeRefused:
		return http.StatusServiceUnavailable, 0
	case e.Type == forge.TypeProvider || rule == classifier.RuleHostHTTPDenied:
		return http.StatusBadGateway, 0
	}
	return http.StatusInternalServerError, 0
}
