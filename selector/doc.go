// Package selector decides, before a call runs, what the forge does with the persisted artifact of
// a role+method: execute it, repair it, regenerate it, generate one from nothing, or refuse.
//
// Decide is pure: it takes plain data (the kill switches, the artifact's state and health, the
// running versions) and returns a Decision{Action, Reason}. It does no I/O, reads no clock and
// imports nothing of the forge, so every combination of its inputs is tested.
//
// Precedence, first match wins:
//
//  1. missing                         -> generate   (missing)
//  2. corrupt or unknown lifecycle    -> generate   (corrupt)
//  3. quarantined, not forced         -> refuse     (quarantined)
//  4. generate-only switch            -> generate   (generate_only)
//  5. read path off                   -> generate   (read_path_off)
//  6. role outside the canary list    -> generate   (canary_excluded)
//  7. operator-forced regeneration    -> regenerate (forced)
//  8. schema version differs          -> regenerate (incompatible_schema); refuse if blessed
//  9. runtime MAJOR version differs   -> regenerate (incompatible_runtime); refuse if blessed
//  10. blessed                        -> execute    (blessed), even if stale or degraded
//  11. stale contract or degraded     -> repair     (stale_contract | degraded), or, when repair
//     is off or the budget is spent, regenerate (repair_off | budget_exhausted)
//  12. archived                       -> execute    (archived): proven code, revived by use
//  13. otherwise                      -> execute    (healthy)
//
// The Reason names the condition that decided; Decision.Notes lists every other condition that
// held, so a blessed artifact that is stale says so. prompt_version is never a reason: a new
// prompt does not invalidate proven code. Extrinsic failures never count toward health.
package selector
