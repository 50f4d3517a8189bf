// The soak's memory samples (soak_memory.h).
#include "soak_memory.h"

#include <unistd.h>

#include <fstream>

namespace vtp::tools::sim {

std::size_t residentBytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  const long page = sysconf(_SC_PAGESIZE);
  return resident * std::size_t(page > 0 ? page : 4096);
}

SoakMemory::Sample SoakMemory::sample(const std::vector<std::unique_ptr<SimWorld>>& modes) {
  Sample s;
  s.rss = residentBytes();
  for (const auto& m : modes) {
    const terrain::WorldStats w = m->world().stats();
    s.keys.push_back(m->key());
    s.world.push_back(w.chunk_bytes + w.table_bytes);
    s.cache.push_back(m->backend().counters().cache_bytes);
  }
  return s;
}

nlohmann::json SoakMemory::processReport() const {
  nlohmann::json j;
  j["rss_bytes_at_120s"] = m_at_120s ? nlohmann::json(m_at_120s->rss) : nlohmann::json();
  j["rss_bytes_end"] = m_end ? m_end->rss : residentBytes();
  return j;
}

void SoakMemory::addModeReport(const SimWorld& mode, nlohmann::json& section) const {
  auto put = [&](const std::optional<Sample>& s, const char* world_key, const char* cache_key) {
    section[world_key] = nullptr;
    section[cache_key] = nullptr;
    if (!s) return;
    for (std::size_t i = 0; i < s->keys.size(); ++i) {
      if (s->keys[i] != mode.key()) continue;
      section[world_key] = s->world[i];
      section[cache_key] = s->cache[i];
    }
  };
  put(m_at_120s, "world_memory_bytes_at_120s", "cache_bytes_at_120s");
  put(m_end, "world_memory_bytes_end", "cache_bytes_end");
}

}  // namespace vtp::tools::sim
