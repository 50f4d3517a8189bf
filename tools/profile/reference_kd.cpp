#include "reference_kd.h"

#include <algorithm>
#include <cmath>

namespace vtp::tools {
namespace {

constexpr std::uint32_t kLeafBit = 1u << 2;

}  // namespace

ReferenceKd::ReferenceKd(const physics::Collider& collider, const physics::KdBuild& kd) : m_collider(collider) {
  m_nodes.resize(kd.nodes.size());
  for (std::size_t i = 0; i < kd.nodes.size(); ++i) {
    const physics::KdNode& n = kd.nodes[i];
    if (n.axis < 0) {
      m_nodes[i] = {0, 0, kLeafBit | std::uint32_t(n.leaf) << 3};
    } else {
      // The build makes a branch's children adjacent (right = left + 1): one index serves.
      m_nodes[i] = {float(n.left_max), float(n.right_min), std::uint32_t(n.axis) | std::uint32_t(n.left) << 3};
    }
  }
}

std::size_t ReferenceKd::bytes() const {
  return m_nodes.size() * sizeof(Node) + 6 * std::size_t(m_collider.vertexCount()) +
         7 * std::size_t(m_collider.triangleCount());
}

float ReferenceKd::closestHit(const physics::ChunkRay& ray) const {
  if (m_nodes.empty() || m_collider.triangleCount() == 0) return -1;
  float o[3], d[3], inv[3];
  for (int a = 0; a < 3; ++a) {
    o[a] = float(ray.origin_int[std::size_t(a)]) + ray.origin_frac[std::size_t(a)];
    d[a] = ray.direction[std::size_t(a)];
    inv[a] = ray.inv_direction[std::size_t(a)];
  }
  float best = ray.max_t;
  bool found = false;
  struct Item {
    std::uint32_t node;
    float t0, t1;
  };
  Item stack[64];
  int top = 0;
  stack[top++] = {0, 0.0f, ray.max_t};
  while (top > 0) {
    const Item it = stack[--top];
    if (it.t0 > best) continue;
    const Node& n = m_nodes[it.node];
    if (n.bits & kLeafBit) {
      const auto [first, last] = m_collider.leafTriangles(int(n.bits >> 3));
      for (int t = first; t < last; ++t) {
        const physics::ColliderTriangle tri = m_collider.triangle(t);
        float v[3][3];
        for (int k = 0; k < 3; ++k) {
          v[k][0] = float(tri.vertices[std::size_t(k)].x) - o[0];
          v[k][1] = float(tri.vertices[std::size_t(k)].y) - o[1];
          v[k][2] = float(tri.vertices[std::size_t(k)].z) - o[2];
        }
        // Möller–Trumbore with the origin at 0, double-sided.
        const float e1[3] = {v[1][0] - v[0][0], v[1][1] - v[0][1], v[1][2] - v[0][2]};
        const float e2[3] = {v[2][0] - v[0][0], v[2][1] - v[0][1], v[2][2] - v[0][2]};
        const float p[3] = {d[1] * e2[2] - d[2] * e2[1], d[2] * e2[0] - d[0] * e2[2], d[0] * e2[1] - d[1] * e2[0]};
        const float det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2];
        if (det == 0) continue;
        const float inv_det = 1.0f / det;
        const float s[3] = {-v[0][0], -v[0][1], -v[0][2]};
        const float u = (s[0] * p[0] + s[1] * p[1] + s[2] * p[2]) * inv_det;
        if (u < 0 || u > 1) continue;
        const float q[3] = {s[1] * e1[2] - s[2] * e1[1], s[2] * e1[0] - s[0] * e1[2], s[0] * e1[1] - s[1] * e1[0]};
        const float w = (d[0] * q[0] + d[1] * q[1] + d[2] * q[2]) * inv_det;
        if (w < 0 || u + w > 1) continue;
        const float hit_t = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) * inv_det;
        if (hit_t >= 0 && hit_t <= best) best = hit_t, found = true;
      }
      continue;
    }
    const int axis = int(n.bits & 3);
    const std::uint32_t left = n.bits >> 3, right = left + 1;
    // The parts of [t0, t1] where the ray is left of left_max and right of right_min.
    const float t_left = (n.left_max - o[axis]) * inv[axis], t_right = (n.right_min - o[axis]) * inv[axis];
    Item near_item, far_item;
    if (d[axis] >= 0) {
      near_item = {left, it.t0, std::min(it.t1, t_left)};
      far_item = {right, std::max(it.t0, t_right), it.t1};
    } else {
      near_item = {right, it.t0, std::min(it.t1, t_right)};
      far_item = {left, std::max(it.t0, t_left), it.t1};
    }
    if (far_item.t0 <= far_item.t1 && top < 64) stack[top++] = far_item;
    if (near_item.t0 <= near_item.t1 && top < 64) stack[top++] = near_item;
  }
  return found ? best : -1.0f;
}

}  // namespace vtp::tools
