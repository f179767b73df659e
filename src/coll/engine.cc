#include "coll/engine.h"

namespace shmcoll::coll {
Engine& engine() {
  static Engine e;
  return e;
}
}  // namespace shmcoll::coll
