// MPI_Op_create(_c), MPI_Op_free, MPI_Op_commutative and MPI_Reduce_local(_c):
// the operation table of op/op.cc.  Local: none of these needs MPI_Init.
#include "api/check.h"
#include <utility>

#include "op/op.h"

namespace shmcoll::api::impl {

int opCreate(Call&, MPI_User_function* f, int commute, MPI_Op* op) {
  *op = op::create(f, nullptr, commute != 0);
  return MPI_SUCCESS;
}
int opCreate(Call&, MPI_User_function_c* f, int commute, MPI_Op* op) {
  *op = op::create(nullptr, f, commute != 0);
  return MPI_SUCCESS;
}

int opFree(Call& call, MPI_Op* op) {
  if (op::isPredefined(*op))
    return check::fail(call, MPI_ERR_OP, "op = %#x is a predefined operation, which cannot be freed",
                       static_cast<unsigned>(*op));
  if (!op::release(*op))
    return check::fail(call, MPI_ERR_OP, "op = %#x is %s", static_cast<unsigned>(*op),
                       *op == MPI_OP_NULL ? "MPI_OP_NULL" : "not a valid operation (or was freed already)");
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}

int opCommutative(Call& call, MPI_Op op, int* commute) {
  if (!op::valid(op) && !op::isPredefined(op))
    return check::fail(call, MPI_ERR_OP, "op = %#x is %s", static_cast<unsigned>(op),
                       op == MPI_OP_NULL ? "MPI_OP_NULL" : "not a valid operation");
  *commute = op::commutative(op) ? 1 : 0;
  return MPI_SUCCESS;
}

// inoutbuf = inbuf (op) inoutbuf, element by element, on this process.
template <class C>
int reduceLocal(Call& call, const void* inbuf, void* inoutbuf, C count, const dt::Type* t, MPI_Op op) {
  SHMCOLL_CHECK(check::op(call, op, t));
  const bool data = count > 0 && t->size > 0 && t->trueLb == 0;
  for (const auto& [arg, buf] : {std::pair<const char*, const void*>{"inbuf", inbuf}, {"inoutbuf", inoutbuf}})
    if (data && (!buf || buf == MPI_IN_PLACE))
      return check::fail(call, MPI_ERR_BUFFER, "%s is %s but %lld elements are to be combined", arg,
                         buf ? "MPI_IN_PLACE" : "NULL", static_cast<long long>(count));
  op::apply(op, inbuf, inoutbuf, static_cast<uint64_t>(count), t->handle);
  return MPI_SUCCESS;
}

}  // namespace shmcoll::api::impl

#include "generated/entry_op.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/op.txt)
