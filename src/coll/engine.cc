#include "coll/engine.h"

namespace shmcoll::coll {
constinit Engine gEngine;
}  // namespace shmcoll::coll
