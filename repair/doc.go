// Package repair holds the policy and the data of fixing artifacts: the repair budget
// (MAX_REPAIRS_BEFORE_REGEN), the post-failure plan (AfterFailure: nothing, repair or regenerate),
// the repair and regeneration requests handed to a code generator, and the lineage triggers that
// record why each generation exists (initial_forge, repair:<class>, regenerate:<reason>,
// operator:<verb>).
//
// Like selector and classifier it is pure: no I/O, no clock, plain data in and out. It imports only
// those two packages, for the class and the reason types.
package repair
