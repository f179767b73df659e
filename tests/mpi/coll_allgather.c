/* coll_allgather: MPI_Allgather byte-for-byte correctness battery (see tu_suite in
 * testutil.h): counts 0/1/odd/large, zero-heavy and skewed count shapes,
 * displacements reversed and with gaps, guard regions, MPI_IN_PLACE,
 * differing send/receive type maps, misaligned buffers.
 *
 *   coll_allgather [large=MiB] [quick]
 */
#include "testutil.h"

int main(int argc, char **argv) { return tu_suite_main(TU_ALLGATHER, "coll_allgather", argc, argv); }
