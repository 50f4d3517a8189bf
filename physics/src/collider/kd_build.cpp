// The loose kD build. Triangles are copied once into records held as structure of arrays (min x, y, z, max x, y, z,
// id; int16 each, the doubled midpoints min + max computed where needed), so every pass works 8 records to an SSE
// register without a branch on the data: per node one pass partitions (a compare of 8 midpoints against the mean,
// and per field one byte shuffle to each side, from a table indexed by the compare's mask; the right side goes to a
// spill buffer and is copied after the left), and one pass per child takes its bounds and midpoint sum, which become
// the child's own. Records move between two buffers by depth parity. The median fallback sorts a node's records by
// (midpoint, id) with nth_element. The children's sets, and so the tree, its planes and its leaves' triangles and
// boxes, are the same as with any other partition; only the order of triangles inside a leaf depends on it.
#include "vtp/physics/kd_build.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

namespace vtp::physics {

namespace {

constexpr int kMin = 0, kMax = 3, kId = 6;  // fields: min x, y, z, max x, y, z, id
constexpr int kFields = 7;
constexpr int kLanes = 8;   // int16 lanes of one SSE register

// Byte shuffles that pack the lanes of an 8-bit mask to the front, for each mask.
struct PackTable {
  alignas(16) std::uint8_t shuffle[256][16];
  constexpr PackTable() : shuffle{} {
    for (int m = 0; m < 256; ++m) {
      int n = 0;
      for (int lane = 0; lane < 8; ++lane) {
        if (m >> lane & 1) {
          shuffle[m][2 * n] = std::uint8_t(2 * lane);
          shuffle[m][2 * n + 1] = std::uint8_t(2 * lane + 1);
          ++n;
        }
      }
      for (; n < 8; ++n) shuffle[m][2 * n] = shuffle[m][2 * n + 1] = 0x80;
    }
  }
};
constexpr PackTable kPack;

// Records as structure of arrays: field f of record i at f * kStride + i in one buffer, so with the stride a
// constant every field is an offset of one base pointer (separate arrays cost a load of each field's base per use:
// any vector store may alias them). kStride leaves 8 lanes of slack after the last record, for 8-lane loads past a
// range's end; the buffers are zeroed when made, so those lanes hold values.
template <std::size_t kStride>
struct Fields {
  std::int16_t* base;
  std::int16_t* field(int f) const { return base + std::size_t(f) * kStride; }
};
struct Records {
  std::unique_ptr<std::int16_t[]> data;
  std::size_t size = 0;
  template <std::size_t kStride>
  Fields<kStride> fields() {
    if (size < kFields * kStride) data = std::make_unique<std::int16_t[]>(size = kFields * kStride);
    return {data.get()};
  }
};
// The strides: chunk colliders (at most 3,072 triangles), and any input buildKd takes (65,535). Neither is a
// multiple of 4 KiB: fields a multiple apart would share L1 sets (and 4 KiB store-to-load aliasing), and a step
// touches 21 of them; one and two cache lines more spread them over consecutive sets.
constexpr std::size_t kSmallStride = 4096 + 32, kLargeStride = 65536 + 64;

struct Bounds {
  int min[3], max[3];
  long long mid2_sum[3];
};

// Bounds of records [first, last) and the sum of their int16 midpoints, 8 records a step; the last 1-7 records with
// the lanes past them masked (the arrays have 8 entries of slack), full steps without a mask.
struct Acc {
  __m128i lo[3], hi[3], sum[3];
};
template <std::size_t kStride>
[[gnu::always_inline]] inline void accumulate(Fields<kStride> r, int i, __m128i valid, Acc& acc) {
  const __m128i top = _mm_set1_epi16(std::numeric_limits<std::int16_t>::max());
  const __m128i bottom = _mm_set1_epi16(std::numeric_limits<std::int16_t>::min());
  const __m128i ones = _mm_set1_epi16(1);
  for (int a = 0; a < 3; ++a) {
    const __m128i mn = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r.field(kMin + a) + i));
    const __m128i mx = _mm_loadu_si128(reinterpret_cast<const __m128i*>(r.field(kMax + a) + i));
    acc.lo[a] = _mm_min_epi16(acc.lo[a], _mm_blendv_epi8(top, mn, valid));
    acc.hi[a] = _mm_max_epi16(acc.hi[a], _mm_blendv_epi8(bottom, mx, valid));
    acc.sum[a] = _mm_add_epi32(acc.sum[a], _mm_madd_epi16(_mm_and_si128(_mm_add_epi16(mn, mx), valid), ones));
  }
}
// Inlined, so the bounds stay in registers: returned through memory, a node's push read them back as wider loads
// across the narrower stores that wrote them, which store forwarding cannot serve.
template <std::size_t kStride>
[[gnu::always_inline]] inline Bounds boundsOf(Fields<kStride> r, int first, int last) {
  const __m128i top = _mm_set1_epi16(std::numeric_limits<std::int16_t>::max());
  const __m128i bottom = _mm_set1_epi16(std::numeric_limits<std::int16_t>::min());
  const __m128i all = _mm_set1_epi16(-1), lane = _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7);
  Acc acc{{top, top, top}, {bottom, bottom, bottom}, {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()}};
  int i = first;
  for (; i + kLanes <= last; i += kLanes) accumulate(r, i, all, acc);
  if (i < last) accumulate(r, i, _mm_cmpgt_epi16(_mm_set1_epi16(std::int16_t(last - i)), lane), acc);
  // Across the lanes: min of 8 int16 lanes by phminposuw on the lanes flipped to unsigned order (max: on their
  // complements), the sum of 4 int32 lanes by halving.
  const __m128i flip = _mm_set1_epi16(std::int16_t(0x8000)), flip_max = _mm_set1_epi16(0x7FFF);
  Bounds b;
  for (int a = 0; a < 3; ++a) {
    b.min[a] = int(std::int16_t(_mm_cvtsi128_si32(_mm_minpos_epu16(_mm_xor_si128(acc.lo[a], flip))) ^ 0x8000));
    b.max[a] = int(std::int16_t(_mm_cvtsi128_si32(_mm_minpos_epu16(_mm_xor_si128(acc.hi[a], flip_max))) ^ 0x7FFF));
    __m128i v = acc.sum[a];
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 3, 2)));
    v = _mm_add_epi32(v, _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 3, 0, 1)));
    b.mid2_sum[a] = _mm_cvtsi128_si32(v);
  }
  return b;
}

// The bounds into records: fields 0-5 are a TriangleBounds' six int16 in order, field 6 its index. Eight at a time,
// each bound loaded as a row of 8 lanes (the last two the next bound's) and the 8 x 8 block transposed by unpacks; a
// block is taken this way only when a bound follows it (its last row reads 4 bytes into that bound), the rest one by
// one.
constexpr int kRow = 6;  // int16 per TriangleBounds: fields 0-5
static_assert(sizeof(TriangleBounds) == kRow * sizeof(std::int16_t) && kMin == 0 && kMax == 3 && kId == kRow);
template <std::size_t kStride>
void copyRecords(std::span<const TriangleBounds> bounds, Fields<kStride> r) {
  const int n = int(bounds.size());
  const auto* row = reinterpret_cast<const std::int16_t*>(bounds.data());
  __m128i id = _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7);
  int i = 0;
  for (; i + kLanes < n; i += kLanes, id = _mm_add_epi16(id, _mm_set1_epi16(kLanes))) {
    __m128i v[8];
    for (int k = 0; k < 8; ++k) v[k] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + kRow * (i + k)));
    __m128i t[8], u[6];
    for (int k = 0; k < 4; ++k) {
      t[2 * k] = _mm_unpacklo_epi16(v[2 * k], v[2 * k + 1]);
      t[2 * k + 1] = _mm_unpackhi_epi16(v[2 * k], v[2 * k + 1]);
    }
    for (int k = 0; k < 2; ++k) {  // rows 4k .. 4k + 3: lanes (0, 1), (2, 3), (4, 5)
      u[3 * k] = _mm_unpacklo_epi32(t[4 * k], t[4 * k + 2]);
      u[3 * k + 1] = _mm_unpackhi_epi32(t[4 * k], t[4 * k + 2]);
      u[3 * k + 2] = _mm_unpacklo_epi32(t[4 * k + 1], t[4 * k + 3]);
    }
    for (int k = 0; k < 3; ++k) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(r.field(2 * k) + i), _mm_unpacklo_epi64(u[k], u[3 + k]));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(r.field(2 * k + 1) + i), _mm_unpackhi_epi64(u[k], u[3 + k]));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(r.field(kId) + i), id);
  }
  for (; i < n; ++i) {
    for (int f = 0; f < kRow; ++f) r.field(f)[i] = row[kRow * i + f];
    r.field(kId)[i] = std::int16_t(std::uint16_t(i));
  }
}

struct Task {
  int first, last, depth, node;
  Bounds bounds;
};

}  // namespace

struct KdScratch::Arrays {
  Records records[2];  // by depth parity
  Records spill;       // a partition's right side before it is copied after the left
  std::vector<Task> stack;
  std::vector<std::array<std::int16_t, kFields>> rows;  // the median fallback's
};

KdScratch::KdScratch() : m_arrays(std::make_unique<Arrays>()) {}
KdScratch::~KdScratch() = default;

void buildKd(std::span<const TriangleBounds> bounds, KdBuildOptions options, KdBuild& out) {
  thread_local KdScratch scratch;
  buildKd(bounds, options, out, scratch);
}

namespace {

// buildKd with the records' stride a constant (Records).
template <std::size_t kStride>
void buildWith(std::span<const TriangleBounds> bounds, int leaf_triangles, int max_depth, KdBuild& out,
               Records (&buffers)[2], Records& spill_buffer, std::vector<Task>& stack,
               std::vector<std::array<std::int16_t, kFields>>& rows) {
  const int n = int(bounds.size());
  const Fields<kStride> records[2] = {buffers[0].fields<kStride>(), buffers[1].fields<kStride>()};
  const Fields<kStride> spill = spill_buffer.fields<kStride>();
  copyRecords(bounds, records[0]);
  out.leaves.clear();
  out.nodes.clear();
  out.order.resize(std::size_t(n));

  stack.clear();
  out.nodes.push_back({});
  stack.push_back({0, n, 0, 0, boundsOf(records[0], 0, n)});
  while (!stack.empty()) {
    // Field by field: a whole-struct copy reads the task with 16-byte loads across the narrower stores of its push a
    // moment earlier (the left child is popped next), and such a load waits for those stores to reach the cache.
    Task task;
    const Task& top = stack.back();
    task.first = top.first, task.last = top.last, task.depth = top.depth, task.node = top.node;
    for (int a = 0; a < 3; ++a) {
      task.bounds.min[a] = top.bounds.min[a];
      task.bounds.max[a] = top.bounds.max[a];
      task.bounds.mid2_sum[a] = top.bounds.mid2_sum[a];
    }
    stack.pop_back();
    const int count = task.last - task.first;
    const Fields<kStride> src = records[task.depth & 1];
    if (count <= leaf_triangles || task.depth >= max_depth) {
      out.nodes[std::size_t(task.node)].leaf = int(out.leaves.size());
      const Bounds& b = task.bounds;
      out.leaves.push_back({task.first, count, {std::int16_t(b.min[0]), std::int16_t(b.min[1]), std::int16_t(b.min[2])},
                            {std::int16_t(b.max[0]), std::int16_t(b.max[1]), std::int16_t(b.max[2])}});
      for (int i = task.first; i < task.last; ++i) {
        out.order[std::size_t(i)] = std::uint16_t(src.field(kId)[i]);
      }
      continue;
    }
    int axis = 0;
    for (int a = 1; a < 3; ++a) {
      if (task.bounds.max[a] - task.bounds.min[a] > task.bounds.max[axis] - task.bounds.min[axis]) axis = a;
    }
    const long long sum = task.bounds.mid2_sum[axis];
    const long long mean = (long long)std::ceil(double(sum) / count);  // exact: |sum| < 2^31
    const Fields<kStride> dst = records[(task.depth + 1) & 1];
    // Left (midpoint below the mean) to dst from first on, right to the spill, both in order; then the spill after
    // the left.
    const std::int16_t* mn = src.field(kMin + axis);
    const std::int16_t* mx = src.field(kMax + axis);
    const __m128i limit = _mm_set1_epi16(std::int16_t(mean));  // a mean of int16 midpoints (rounded up) fits int16
    int left = task.first, right = 0;
    // 8 records a step, `valid` selecting the lanes to move: a compare, and per field one byte shuffle each way.
    auto step = [&](int i, unsigned valid) {
      const __m128i mid2 = _mm_add_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(mn + i)),
                                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(mx + i)));
      const unsigned below = _pext_u32(unsigned(_mm_movemask_epi8(_mm_cmplt_epi16(mid2, limit))), 0x5555u);
      const unsigned to_left = below & valid, to_right = ~below & valid;
      const __m128i pack_left = _mm_load_si128(reinterpret_cast<const __m128i*>(kPack.shuffle[to_left]));
      const __m128i pack_right = _mm_load_si128(reinterpret_cast<const __m128i*>(kPack.shuffle[to_right]));
      for (int f = 0; f < kFields; ++f) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src.field(f) + i));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst.field(f) + left), _mm_shuffle_epi8(v, pack_left));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(spill.field(f) + right), _mm_shuffle_epi8(v, pack_right));
      }
      left += std::popcount(to_left);
      right += std::popcount(to_right);
    };
    // The first count % 8 records go as one step with the other lanes masked, then full steps: no scalar tail. The
    // masked step's left store may write past its records, but only inside this node's range (count >= 8), where the
    // later steps and the right side's copy overwrite it (beyond the range lie other nodes' records). Both sides keep
    // the records' order. A node of fewer than 8 (only with leaves below 7 triangles) goes record by record.
    int i = task.first;
    if (count >= kLanes) {
      const int head = count % kLanes;
      if (head != 0) step(i, (1u << head) - 1);
      for (i += head; i < task.last; i += kLanes) step(i, 0xFFu);
    } else {
      for (; i < task.last; ++i) {
        const bool go_left = std::int16_t(mn[i] + mx[i]) < mean;
        for (int f = 0; f < kFields; ++f) {
          dst.field(f)[left] = src.field(f)[i];
          spill.field(f)[right] = src.field(f)[i];
        }
        left += go_left;
        right += !go_left;
      }
    }
    // The spill after the left, every field 8 records a step; the last step overlaps the one before it, and a right
    // side of fewer than 8 goes record by record.
    auto copy8 = [&](int k) {
      for (int f = 0; f < kFields; ++f) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst.field(f) + left + k),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(spill.field(f) + k)));
      }
    };
    if (right >= kLanes) {
      for (int k = 0; k + kLanes < right; k += kLanes) copy8(k);
      copy8(right - kLanes);
    } else {
      for (int k = 0; k < right; ++k)
        for (int f = 0; f < kFields; ++f) dst.field(f)[left + k] = spill.field(f)[k];
    }
    int split = left;
    const int left_count = split - task.first;
    if (4 * left_count < count || 4 * (count - left_count) < count) {
      // The median instead: the count / 2 smallest by (midpoint, id) go left.
      rows.resize(std::size_t(count));
      for (int k = 0; k < count; ++k)
        for (int f = 0; f < kFields; ++f) {
          rows[std::size_t(k)][std::size_t(f)] = dst.field(f)[task.first + k];
        }
      std::nth_element(rows.begin(), rows.begin() + count / 2, rows.end(), [&](const auto& x, const auto& y) {
        const std::int16_t mx2 = std::int16_t(x[std::size_t(kMin + axis)] + x[std::size_t(kMax + axis)]);
        const std::int16_t my2 = std::int16_t(y[std::size_t(kMin + axis)] + y[std::size_t(kMax + axis)]);
        return mx2 != my2 ? mx2 < my2 : std::uint16_t(x[kId]) < std::uint16_t(y[kId]);
      });
      for (int k = 0; k < count; ++k)
        for (int f = 0; f < kFields; ++f) {
          dst.field(f)[task.first + k] = rows[std::size_t(k)][std::size_t(f)];
        }
      split = task.first + count / 2;
    }
    const Bounds left_bounds = boundsOf(dst, task.first, split), right_bounds = boundsOf(dst, split, task.last);
    const int l_node = int(out.nodes.size()), r_node = l_node + 1;
    KdNode& node = out.nodes[std::size_t(task.node)];
    node.axis = axis;
    node.left_max = left_bounds.max[axis];
    node.right_min = right_bounds.min[axis];
    node.left = l_node;
    node.right = r_node;
    out.nodes.push_back({});
    out.nodes.push_back({});
    stack.push_back({split, task.last, task.depth + 1, r_node, right_bounds});
    stack.push_back({task.first, split, task.depth + 1, l_node, left_bounds});
  }
}

}  // namespace

void buildKd(std::span<const TriangleBounds> bounds, KdBuildOptions options, KdBuild& out, KdScratch& scratch) {
  const int leaf_triangles = std::clamp(options.leaf_triangles, 1, 64);
  const int max_depth = std::clamp(options.max_depth, 0, 64);
  bounds = bounds.first(std::min<std::size_t>(bounds.size(), 65535));
  KdScratch::Arrays& a = *scratch.m_arrays;
  if (bounds.size() + kLanes <= kSmallStride) {
    buildWith<kSmallStride>(bounds, leaf_triangles, max_depth, out, a.records, a.spill, a.stack, a.rows);
  } else {
    buildWith<kLargeStride>(bounds, leaf_triangles, max_depth, out, a.records, a.spill, a.stack, a.rows);
  }
}

int kdDepth(const KdBuild& build) {
  if (build.nodes.empty()) return 0;
  int deepest = 0;
  std::vector<std::pair<int, int>> stack{{0, 0}};  // node, depth
  while (!stack.empty()) {
    const auto [node, depth] = stack.back();
    stack.pop_back();
    const KdNode& n = build.nodes[std::size_t(node)];
    if (n.axis < 0) {
      deepest = std::max(deepest, depth);
    } else {
      stack.push_back({n.left, depth + 1});
      stack.push_back({n.right, depth + 1});
    }
  }
  return deepest;
}

}  // namespace vtp::physics
