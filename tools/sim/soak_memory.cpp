// The soak's memory samples (soak_memory.h).
#include "soak_memory.h"

#include <malloc.h>
#include <unistd.h>

#include <fstream>

#include "alloc_hook.h"

namespace vtp::tools::sim {

std::size_t residentBytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  const long page = sysconf(_SC_PAGESIZE);
  return resident * std::size_t(page > 0 ? page : 4096);
}

std::size_t heapInUseBytes() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

SoakMemory::Sample SoakMemory::sample(const std::vector<std::unique_ptr<SimWorld>>& modes) {
  Sample s;
  s.rss = residentBytes();
  s.heap = heapInUseBytes();
  for (const auto& m : modes) {
    const terrain::WorldStats w = m->world().stats();
    s.keys.push_back(m->key());
    s.world.push_back(w.chunk_bytes + w.table_bytes);
    const BackendCounters counters = m->backend().counters();
    s.cache.push_back(counters.cache_bytes);
    s.index.push_back(counters.index_bytes);
    s.collision.push_back(taggedLiveBytes(m->tag()));
  }
  return s;
}

nlohmann::json SoakMemory::processReport() const {
  nlohmann::json j;
  j["rss_bytes_at_120s"] = m_at_120s ? nlohmann::json(m_at_120s->rss) : nlohmann::json();
  j["rss_bytes_end"] = m_end ? m_end->rss : residentBytes();
  j["heap_in_use_bytes_at_120s"] = m_at_120s ? nlohmann::json(m_at_120s->heap) : nlohmann::json();
  j["heap_in_use_bytes_end"] = m_end ? m_end->heap : heapInUseBytes();
  return j;
}

void SoakMemory::addModeReport(const SimWorld& mode, nlohmann::json& section) const {
  auto put = [&](const std::optional<Sample>& s, const std::string& when) {
    const std::string world_key = "world_memory_bytes_" + when, cache_key = "cache_bytes_" + when,
                      index_key = "index_bytes_" + when, collision_key = "collision_live_bytes_" + when;
    section[world_key] = section[cache_key] = section[index_key] = section[collision_key] = nullptr;
    if (!s) return;
    for (std::size_t i = 0; i < s->keys.size(); ++i) {
      if (s->keys[i] != mode.key()) continue;
      section[world_key] = s->world[i];
      section[cache_key] = s->cache[i];
      section[index_key] = s->index[i];
      section[collision_key] = s->collision[i];
    }
  };
  put(m_at_120s, "at_120s");
  put(m_end, "end");
}

}  // namespace vtp::tools::sim
