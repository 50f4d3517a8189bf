// The dispatcher's create functions for (convex, CUSTOM_CONCAVE) pairs: recorded before the terrain registers its
// own, served to other concave shapes of that type, and put back when the terrain goes.
#include "bullet/bullet_terrain_state.h"

namespace vtp::physics {
namespace {

// btCollisionDispatcher registers create functions but has no getter for them: its tables are protected members,
// named here through a derived class (never instantiated) as pointers to members of the base.
struct DispatcherTables : btCollisionDispatcher {
  using Table = btCollisionAlgorithmCreateFunc* [MAX_BROADPHASE_COLLISION_TYPES][MAX_BROADPHASE_COLLISION_TYPES];
  static btCollisionAlgorithmCreateFunc* entry(const btCollisionDispatcher& d, DispatcherEntries::Query query, int a,
                                               int b) {
    constexpr Table btCollisionDispatcher::*kTables[2] = {&DispatcherTables::m_doubleDispatchContactPoints,
                                                          &DispatcherTables::m_doubleDispatchClosestPoints};
    return (d.*kTables[query])[a][b];
  }
};

constexpr int kConcave = CUSTOM_CONCAVE_SHAPE_TYPE;

}  // namespace

DispatcherEntries::DispatcherEntries(btCollisionDispatcher& dispatcher) : m_dispatcher(dispatcher) {
  for (Query q : {kContacts, kClosestPoints}) {
    for (int type = 0; type < kConvexTypes; ++type) {
      m_previous[q][type][0] = DispatcherTables::entry(dispatcher, q, type, kConcave);
      m_previous[q][type][1] = DispatcherTables::entry(dispatcher, q, kConcave, type);
    }
  }
}

bool DispatcherEntries::holdTerrain() const {
  for (const auto& query : m_previous) {
    for (const auto& type : query) {
      for (btCollisionAlgorithmCreateFunc* f : type) {
        if (dynamic_cast<TerrainCreateFuncBase*>(f) != nullptr) return true;
      }
    }
  }
  return false;
}

btCollisionAlgorithmCreateFunc* DispatcherEntries::previous(Query query, int type0, int type1) const {
  const bool concave_first = type0 == kConcave;
  const int convex = concave_first ? type1 : type0;
  btCollisionAlgorithmCreateFunc* f =
      convex >= 0 && convex < kConvexTypes ? m_previous[query][convex][concave_first ? 1 : 0] : nullptr;
  if (f != nullptr) return f;
  btCollisionConfiguration& config = *m_dispatcher.getCollisionConfiguration();
  return query == kContacts ? config.getCollisionAlgorithmCreateFunc(type0, type1)
                            : config.getClosestPointsAlgorithmCreateFunc(type0, type1);
}

void DispatcherEntries::install(btCollisionAlgorithmCreateFunc* const (&contacts)[2],
                                btCollisionAlgorithmCreateFunc* closest) {
  for (int type = 0; type < kConvexTypes; ++type) {
    m_dispatcher.registerCollisionCreateFunc(type, kConcave, contacts[0]);
    m_dispatcher.registerCollisionCreateFunc(kConcave, type, contacts[1]);
    m_dispatcher.registerClosestPointsCreateFunc(type, kConcave, closest);
    m_dispatcher.registerClosestPointsCreateFunc(kConcave, type, closest);
  }
}

void DispatcherEntries::restore(const btCollisionAlgorithmCreateFunc* const (&contacts)[2],
                                const btCollisionAlgorithmCreateFunc* closest) {
  auto put = [&](Query q, int a, int b, const btCollisionAlgorithmCreateFunc* ours,
                 btCollisionAlgorithmCreateFunc* old) {
    if (DispatcherTables::entry(m_dispatcher, q, a, b) != ours) return;
    if (q == kContacts) m_dispatcher.registerCollisionCreateFunc(a, b, old);
    else m_dispatcher.registerClosestPointsCreateFunc(a, b, old);
  };
  for (int type = 0; type < kConvexTypes; ++type) {
    put(kContacts, type, kConcave, contacts[0], m_previous[kContacts][type][0]);
    put(kContacts, kConcave, type, contacts[1], m_previous[kContacts][type][1]);
    put(kClosestPoints, type, kConcave, closest, m_previous[kClosestPoints][type][0]);
    put(kClosestPoints, kConcave, type, closest, m_previous[kClosestPoints][type][1]);
  }
}

}  // namespace vtp::physics
