// The predefined datatypes as the engine builds them (dt::makeNamed), and
// the byte type the engine itself uses for raw bytes.  Which handle names
// which predefined type is the runtime's business (runtime/types.cc).
#include <cstddef>

#include "dt/datatype.h"
#include "dt/node.h"

namespace shmcoll::dt {

Type makeNamed(const char* name, int64_t extent, uint32_t align, std::vector<Block> blocks) {
  Type t;
  t.align = align;
  t.elements = blocks.size();  // pair types count as two basic elements (MPI_Get_elements)
  t.combiner = kNamed;
  std::vector<std::pair<int64_t, NodeP>> leaves;
  for (const Block& b : blocks) leaves.emplace_back(0, leaf(b.disp, b.len));
  t.root = list(std::move(leaves));
  t.blocksComplete = true;
  t.numBlocks = blocks.size();
  t.name = name;
  t.builtin = true;
  t.committed = true;
  t.blocks = std::move(blocks);
  t.size = 0;
  for (const Block& b : t.blocks) t.size += b.len;
  t.lb = 0;
  t.ub = extent;
  t.trueLb = t.blocks.front().disp;
  t.trueUb = t.blocks.back().disp + static_cast<int64_t>(t.blocks.back().len);
  // blocks stay unmerged (MPI_2INT keeps two): MPI_Get_elements counts its elements by them.
  t.contiguous = t.root->kind == Node::kLeaf && static_cast<int64_t>(t.size) == extent;
  t.tier = t.contiguous ? Tier::kContig : Tier::kIrregular;
  return t;
}

const Type* byteType() {
  static const Type t = makeNamed("MPI_BYTE", 1, 1, {{0, 1}});
  return &t;
}

}  // namespace shmcoll::dt
