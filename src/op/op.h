// Reduction operations: the predefined MPI_Op set and user functions.
//
// Buffers are in the datatype's memory layout (count elements, each `extent`
// bytes apart, as a user function sees them), never in packed form.  The
// predefined operations accept a predefined datatype of a class the standard
// allows for that operation, the pair types for MPI_MAXLOC/MPI_MINLOC, and a
// derived datatype whose type map holds only one such predefined type (e.g. a
// contiguous or vector of MPI_DOUBLE), which they walk element by element.
//
// Order: apply() computes inout[i] = in[i] (op) inout[i], the order the
// standard gives user functions; a non-commutative reduction over ranks
// 0..n-1 is a0 (op) (a1 (op) (... (op) a(n-1))), so callers fold from the
// highest rank down with the lower rank's data as `in`.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "coll/coll.h"

namespace shmcoll::dt {
class Type;
}

namespace shmcoll::op {

// True for a valid MPI_Op handle (predefined or user, not freed; not MPI_OP_NULL).
bool valid(MPI_Op op);
// Commutativity (predefined operations are all commutative).
bool commutative(MPI_Op op);

// Returns 0 when `op` may be applied to `type`; otherwise records a reason
// with shmcoll::fail() (naming the operation and the type) and returns the
// error class (MPI_ERR_OP for an invalid handle or a predefined operation not
// defined on that type, MPI_ERR_TYPE for an invalid or uncommitted type).
int check(MPI_Op op, MPI_Datatype type);
// The same for a resolved (valid) type.
int check(MPI_Op op, const dt::Type* t);

// inout[i] = in[i] (op) inout[i] for `count` elements of `type`.  `check`
// must have accepted (op, type).  Calls a user function in pieces of at most
// INT_MAX elements.  MPI_REPLACE copies in to inout; MPI_NO_OP leaves inout.
// `t`, when given, is the resolved `type`: a nonblocking reduction holds it
// and passes it, because the user may free the handle before the fold runs.
void apply(MPI_Op op, const void* in, void* inout, uint64_t count, MPI_Datatype type, const dt::Type* t = nullptr);

// A pending nonblocking reduction holds its user operation, so that
// MPI_Op_free while it runs only marks the operation for deallocation (the
// standard's wording): apply() still finds it and create() does not reuse
// its handle until the last hold is dropped.  No-ops for predefined operations.
void hold(MPI_Op op);
void unhold(MPI_Op op);

// One-sided accumulates: the one predefined type `t`'s type map is made of
// (its handle; 0 when it mixes several or is empty), and inout = in (op)
// inout over `bytes` bytes of the packed stream of that predefined type
// `basic` (MPI_REPLACE copies, MPI_NO_OP does nothing).  `op` is predefined
// and check() accepted it for `basic`.
int basicType(const dt::Type* t);
void applyPacked(MPI_Op op, const void* in, void* inout, uint64_t bytes, int basic);
// True when `op` is a predefined reduction operation (not MPI_REPLACE or
// MPI_NO_OP) defined on the predefined type `builtin`: what check() accepts
// for a predefined type, without its messages.
bool definedOn(MPI_Op op, MPI_Datatype builtin);

// The engine's view of (op, type) for a reduction (coll::Operator): apply()
// above with the resolved type, and hold()/unhold() of the operation.
// `check` must have accepted (op, type).
coll::Operator makeOperator(MPI_Op op, MPI_Datatype type);
// check() and makeOperator() in one look-up for the common case, a
// predefined operation on a committed predefined type it is defined on:
// true with *out set; false for every other pair (then check() says whether
// and why it is refused, and makeOperator() builds it), *out untouched.
bool predefinedOperator(MPI_Op op, const dt::Type* t, coll::Operator* out);

// User operations (MPI_Op_create / MPI_Op_create_c; exactly one of fn, fnc).
MPI_Op create(MPI_User_function* fn, MPI_User_function_c* fnc, bool commute);
// True for the predefined handles (including MPI_REPLACE and MPI_NO_OP).
bool isPredefined(MPI_Op op);
// Frees a user operation; false when `op` is not a live user operation.
bool release(MPI_Op op);

}  // namespace shmcoll::op
