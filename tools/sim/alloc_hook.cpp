// The allocation hook (alloc_hook.h): a 16-byte header in front of every block, holding its usable size and tag.
#include "alloc_hook.h"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include <LinearMath/btAlignedAllocator.h>

namespace vtp::tools::sim {
namespace {

constexpr std::size_t kHeader = 16;  // keeps malloc's 16-byte alignment for the block after it

struct Header {
  std::size_t bytes;   // usable bytes of the whole malloc block, header included
  std::uint32_t tag;
  std::uint32_t offset;  // from the malloc block's start to the header (over-aligned blocks)
};
static_assert(sizeof(Header) <= kHeader);

thread_local int t_tag = 0;
std::atomic<std::size_t> g_live[kMaxTags];
std::atomic<std::size_t> g_peak[kMaxTags];

void count(int tag, std::size_t bytes) {
  const std::size_t live = g_live[tag].fetch_add(bytes, std::memory_order_relaxed) + bytes;
  std::size_t peak = g_peak[tag].load(std::memory_order_relaxed);
  while (live > peak && !g_peak[tag].compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

// `alignment` is a power of two; blocks up to 16-aligned need no padding.
void* hookedAlloc(std::size_t size, std::size_t alignment) noexcept {
  const std::size_t pad = alignment > kHeader ? alignment : kHeader;
  void* raw = alignment > kHeader ? std::aligned_alloc(alignment, (size + pad + alignment - 1) / alignment * alignment)
                                  : std::malloc(size + pad);
  if (raw == nullptr) return nullptr;
  auto* user = static_cast<unsigned char*>(raw) + pad;
  auto* header = reinterpret_cast<Header*>(user - kHeader);
  header->bytes = malloc_usable_size(raw);
  header->tag = std::uint32_t(t_tag);
  header->offset = std::uint32_t(pad - kHeader);
  if (header->tag != 0) count(int(header->tag), header->bytes);
  return user;
}

void hookedFree(void* p) noexcept {
  if (p == nullptr) return;
  auto* header = reinterpret_cast<Header*>(static_cast<unsigned char*>(p) - kHeader);
  if (header->tag != 0) g_live[header->tag].fetch_sub(header->bytes, std::memory_order_relaxed);
  std::free(reinterpret_cast<unsigned char*>(header) - header->offset);
}

void* bulletAlloc(std::size_t size) { return hookedAlloc(size, 16); }
void bulletFree(void* p) { hookedFree(p); }

void* newOrThrow(std::size_t size, std::size_t alignment) {
  void* p = hookedAlloc(size == 0 ? 1 : size, alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void installBulletAllocationHook() { btAlignedAllocSetCustom(bulletAlloc, bulletFree); }

std::size_t taggedLiveBytes(int tag) { return g_live[tag].load(std::memory_order_relaxed); }
std::size_t taggedPeakBytes(int tag) { return g_peak[tag].load(std::memory_order_relaxed); }
int currentTag() { return t_tag; }
void tagThisThread(int tag) { t_tag = tag; }
void resetTaggedPeak(int tag) { g_peak[tag].store(g_live[tag].load(std::memory_order_relaxed)); }

TerrainScope::TerrainScope(int tag) noexcept : m_previous(t_tag) { t_tag = tag; }
TerrainScope::~TerrainScope() { t_tag = m_previous; }

}  // namespace vtp::tools::sim

// The replaced global allocation functions: every C++ heap block of the process goes through the hook.
using vtp::tools::sim::hookedAlloc;
using vtp::tools::sim::hookedFree;
using vtp::tools::sim::newOrThrow;

void* operator new(std::size_t size) { return newOrThrow(size, 16); }
void* operator new[](std::size_t size) { return newOrThrow(size, 16); }
void* operator new(std::size_t size, std::align_val_t a) { return newOrThrow(size, std::size_t(a)); }
void* operator new[](std::size_t size, std::align_val_t a) { return newOrThrow(size, std::size_t(a)); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return hookedAlloc(size == 0 ? 1 : size, 16); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return hookedAlloc(size == 0 ? 1 : size, 16); }
void* operator new(std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return hookedAlloc(size == 0 ? 1 : size, std::size_t(a));
}
void* operator new[](std::size_t size, std::align_val_t a, const std::nothrow_t&) noexcept {
  return hookedAlloc(size == 0 ? 1 : size, std::size_t(a));
}
void operator delete(void* p) noexcept { hookedFree(p); }
void operator delete[](void* p) noexcept { hookedFree(p); }
void operator delete(void* p, std::size_t) noexcept { hookedFree(p); }
void operator delete[](void* p, std::size_t) noexcept { hookedFree(p); }
void operator delete(void* p, std::align_val_t) noexcept { hookedFree(p); }
void operator delete[](void* p, std::align_val_t) noexcept { hookedFree(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { hookedFree(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { hookedFree(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { hookedFree(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { hookedFree(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { hookedFree(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { hookedFree(p); }
