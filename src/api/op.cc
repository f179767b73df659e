// MPI_Op_create(_c), MPI_Op_free, MPI_Op_commutative and MPI_Reduce_local(_c):
// argument checks around the operation table of op/op.cc.
#include "api/api.h"
#include "dt/datatype.h"
#include "op/op.h"

using namespace shmcoll;

namespace {

int opCreate(const char* fn, MPI_User_function* f, MPI_User_function_c* fc, int commute, MPI_Op* op) {
  SHMCOLL_REQUIRE(f || fc, api::kNoComm, fn, MPI_ERR_ARG, "user_fn is NULL");
  SHMCOLL_REQUIRE(op, api::kNoComm, fn, MPI_ERR_ARG, "op is NULL");
  *op = op::create(f, fc, commute != 0);
  return MPI_SUCCESS;
}

template <class C>
int reduceLocal(const char* fn, const void* inbuf, void* inoutbuf, C count, MPI_Datatype datatype, MPI_Op op) {
  SHMCOLL_REQUIRE(count >= 0, api::kNoComm, fn, MPI_ERR_COUNT, "count = %lld is negative",
                  static_cast<long long>(count));
  const dt::Type* t = dt::fromHandle(datatype);
  SHMCOLL_REQUIRE(t, api::kNoComm, fn, MPI_ERR_TYPE, "datatype = %#x is %s", static_cast<unsigned>(datatype),
                  datatype == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype");
  if (int rc = op::check(op, datatype)) return api::raise(api::kNoComm, fn, rc);
  const bool data = count > 0 && t->size > 0 && t->trueLb == 0;
  SHMCOLL_REQUIRE(!data || (inbuf && inbuf != MPI_IN_PLACE), api::kNoComm, fn, MPI_ERR_BUFFER,
                  "inbuf is %s but %lld elements are to be combined", inbuf ? "MPI_IN_PLACE" : "NULL",
                  static_cast<long long>(count));
  SHMCOLL_REQUIRE(!data || (inoutbuf && inoutbuf != MPI_IN_PLACE), api::kNoComm, fn, MPI_ERR_BUFFER,
                  "inoutbuf is %s but %lld elements are to be combined", inoutbuf ? "MPI_IN_PLACE" : "NULL",
                  static_cast<long long>(count));
  op::apply(op, inbuf, inoutbuf, static_cast<uint64_t>(count), datatype);
  return MPI_SUCCESS;
}

}  // namespace

SHMCOLL_API(int, MPI_Op_create, (MPI_User_function * user_fn, int commute, MPI_Op* op)) {
  return opCreate("MPI_Op_create", user_fn, nullptr, commute, op);
}
SHMCOLL_API(int, MPI_Op_create_c, (MPI_User_function_c * user_fn, int commute, MPI_Op* op)) {
  return opCreate("MPI_Op_create_c", nullptr, user_fn, commute, op);
}

SHMCOLL_API(int, MPI_Op_free, (MPI_Op * op)) {
  static const char* fn = "MPI_Op_free";
  SHMCOLL_REQUIRE(op, api::kNoComm, fn, MPI_ERR_ARG, "op is NULL");
  SHMCOLL_REQUIRE(!op::isPredefined(*op), api::kNoComm, fn, MPI_ERR_OP,
                  "op = %#x is a predefined operation, which cannot be freed", static_cast<unsigned>(*op));
  SHMCOLL_REQUIRE(op::release(*op), api::kNoComm, fn, MPI_ERR_OP, "op = %#x is %s", static_cast<unsigned>(*op),
                  *op == MPI_OP_NULL ? "MPI_OP_NULL" : "not a valid operation (or was freed already)");
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Op_commutative, (MPI_Op op, int* commute)) {
  static const char* fn = "MPI_Op_commutative";
  SHMCOLL_REQUIRE(commute, api::kNoComm, fn, MPI_ERR_ARG, "commute is NULL");
  SHMCOLL_REQUIRE(op::valid(op) || op::isPredefined(op), api::kNoComm, fn, MPI_ERR_OP, "op = %#x is %s",
                  static_cast<unsigned>(op), op == MPI_OP_NULL ? "MPI_OP_NULL" : "not a valid operation");
  *commute = op::commutative(op) ? 1 : 0;
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Reduce_local,
            (const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op)) {
  return reduceLocal("MPI_Reduce_local", inbuf, inoutbuf, count, datatype, op);
}
SHMCOLL_API(int, MPI_Reduce_local_c,
            (const void* inbuf, void* inoutbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op)) {
  return reduceLocal("MPI_Reduce_local_c", inbuf, inoutbuf, count, datatype, op);
}
