// Package classifier decides whose fault a failed call was: the artifact's code (intrinsic), the
// world outside it (extrinsic), upstream data that drifted away from what the code expects
// (adaptive), or the caller's arguments (caller).
//
// The class steers everything after a failure: only intrinsic and adaptive failures count toward
// an artifact's health and trigger repair; an extrinsic failure (a network outage, a rate limit, a
// provider that is down) is reported and retried but never demotes proven code, and a caller
// error is the caller's to fix.
//
// Classify is pure: it reads plain data that mirrors what the sandbox and the providers report,
// does no I/O and keeps no state, so it is tested exhaustively by tables. Every Result names the
// Rule that fired, a stable machine id that the event log and the lineage record.
package classifier
