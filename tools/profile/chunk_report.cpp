#include "chunk_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "output_file.h"

namespace vtp::tools {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string num(double v, int digits = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string fmt(const nlohmann::json& v) {
  if (v.is_number_float()) return num(v.get<double>());
  if (v.is_null()) return "—";
  return escape(v.dump());
}

// The report's value at JSON pointer `pointer`, formatted ("—" when absent).
std::string figure(const nlohmann::json& report, const std::string& pointer) {
  return fmt(report.value(nlohmann::json::json_pointer(pointer), nlohmann::json(nullptr)));
}

// A histogram of `values` as an SVG bar chart.
std::string histogram(const std::vector<double>& values, const std::string& title, const std::string& unit) {
  constexpr int kBins = 30, kW = 560, kH = 200, kPad = 36;
  std::ostringstream svg;
  svg << "<figure><figcaption>" << escape(title) << "</figcaption><svg width='" << kW << "' height='" << kH + kPad
      << "' xmlns='http://www.w3.org/2000/svg'>";
  if (!values.empty()) {
    std::vector<double> v = values;
    std::sort(v.begin(), v.end());
    const double lo = v.front(), hi = std::max(v[v.size() * 99 / 100], lo + 1e-9);
    std::vector<int> bins(kBins, 0);
    for (double x : v) bins[std::size_t(std::clamp(int((x - lo) / (hi - lo) * kBins), 0, kBins - 1))]++;
    const int top = *std::max_element(bins.begin(), bins.end());
    const double bw = double(kW - kPad) / kBins;
    for (int b = 0; b < kBins; ++b) {
      const double h = top ? double(bins[std::size_t(b)]) / top * (kH - 10) : 0;
      svg << "<rect x='" << num(kPad + b * bw, 6) << "' y='" << num(kH - h, 6) << "' width='" << num(bw - 1, 6)
          << "' height='" << num(h, 6) << "' fill='#4a7bd0'><title>" << bins[std::size_t(b)] << " chunks</title></rect>";
    }
    svg << "<text x='" << kPad << "' y='" << kH + 16 << "' font-size='11'>" << num(lo) << " " << escape(unit)
        << "</text><text x='" << kW - 120 << "' y='" << kH + 16 << "' font-size='11'>" << num(hi) << " " << escape(unit)
        << " (p99)</text><text x='0' y='12' font-size='11'>" << top << "</text>";
  }
  svg << "</svg></figure>";
  return svg.str();
}

// Build time against triangle count, ours and Bullet quantised, log-scaled time.
std::string scatter(const std::vector<ChunkRow>& rows) {
  constexpr int kW = 560, kH = 260, kPad = 40;
  std::ostringstream svg;
  svg << "<figure><figcaption>Build time (ns, log scale) against triangles per chunk: ours (blue), Bullet quantised "
         "(orange)</figcaption><svg width='"
      << kW << "' height='" << kH + kPad << "' xmlns='http://www.w3.org/2000/svg'>";
  int max_tri = 1;
  double lo = 1e300, hi = 1;
  for (const ChunkRow& r : rows) {
    max_tri = std::max(max_tri, r.triangles);
    for (double t : {r.build_ns, r.bullet_quantized_ns}) {
      if (t > 0) lo = std::min(lo, t), hi = std::max(hi, t);
    }
  }
  lo = std::max(lo, 1.0);
  auto y = [&](double t) { return kH - (std::log(std::max(t, lo)) - std::log(lo)) / (std::log(hi) - std::log(lo) + 1e-9) * (kH - 10); };
  const std::size_t step = std::max<std::size_t>(1, rows.size() / 3000);
  for (std::size_t i = 0; i < rows.size(); i += step) {
    const double x = kPad + double(rows[i].triangles) / max_tri * (kW - kPad - 10);
    svg << "<circle cx='" << num(x, 6) << "' cy='" << num(y(rows[i].build_ns), 6) << "' r='1.5' fill='#4a7bd0'/>";
    svg << "<circle cx='" << num(x, 6) << "' cy='" << num(y(rows[i].bullet_quantized_ns), 6)
        << "' r='1.5' fill='#e07b24'/>";
  }
  svg << "<text x='" << kPad << "' y='" << kH + 16 << "' font-size='11'>0 triangles</text><text x='" << kW - 110
      << "' y='" << kH + 16 << "' font-size='11'>" << max_tri << " triangles</text><text x='0' y='12' font-size='11'>"
      << num(hi) << " ns</text><text x='0' y='" << kH << "' font-size='11'>" << num(lo) << "</text></svg></figure>";
  return svg.str();
}

// Top-down map: one cell per chunk column (x, z), coloured by the column's collider bytes.
std::string topDownMap(const std::vector<ChunkRow>& rows) {
  std::map<std::pair<int, int>, double> cost;
  for (const ChunkRow& r : rows) cost[{r.chunk.x, r.chunk.z}] += double(r.bytes);
  std::ostringstream svg;
  svg << "<figure><figcaption>Top-down map: collider bytes per chunk column (x right, z down; dark = more)"
         "</figcaption>";
  if (cost.empty()) return svg.str() + "</figure>";
  int x0 = 1 << 30, x1 = -(1 << 30), z0 = 1 << 30, z1 = -(1 << 30);
  double top = 1;
  for (const auto& [k, v] : cost) {
    x0 = std::min(x0, k.first), x1 = std::max(x1, k.first), z0 = std::min(z0, k.second), z1 = std::max(z1, k.second);
    top = std::max(top, v);
  }
  const int cell = std::clamp(560 / std::max(1, std::max(x1 - x0 + 1, z1 - z0 + 1)), 2, 16);
  svg << "<svg width='" << (x1 - x0 + 1) * cell << "' height='" << (z1 - z0 + 1) * cell
      << "' xmlns='http://www.w3.org/2000/svg' style='background:#f4f4f4'>";
  for (const auto& [k, v] : cost) {
    const int shade = int(235 - 200 * v / top);
    svg << "<rect x='" << (k.first - x0) * cell << "' y='" << (k.second - z0) * cell << "' width='" << cell
        << "' height='" << cell << "' fill='rgb(" << shade << "," << shade << ",255)'><title>chunk column (" << k.first
        << ", " << k.second << "): " << num(v, 6) << " bytes</title></rect>";
  }
  svg << "</svg></figure>";
  return svg.str();
}

}  // namespace

Status writeChunkCsv(const std::vector<ChunkRow>& rows, const std::string& path) {
  std::ostringstream out;
  out << "chunk_x,chunk_y,chunk_z,triangles,read_box_ns,mesh_ns,mask_ns,collider_build_ns,kd_depth,kd_nodes,leaves,"
         "collider_bytes,bullet_quantized_build_ns,bullet_quantized_bytes,bullet_plain_build_ns,bullet_plain_bytes\n";
  for (const ChunkRow& r : rows) {
    out << r.chunk.x << ',' << r.chunk.y << ',' << r.chunk.z << ',' << r.triangles << ',' << num(r.read_box_ns, 6) << ','
        << num(r.mesh_ns, 6) << ',' << num(r.mask_ns, 6) << ',' << num(r.build_ns, 6) << ',' << r.kd_depth << ','
        << r.kd_nodes << ',' << r.leaves << ',' << r.bytes << ',' << num(r.bullet_quantized_ns, 6) << ','
        << r.bullet_quantized_bytes << ',' << num(r.bullet_plain_ns, 6) << ',' << r.bullet_plain_bytes << '\n';
  }
  return writeOutputFile(out.str(), path);
}

Status writeHtmlReport(const nlohmann::json& report, const std::vector<ChunkRow>& rows, const std::string& path) {
  std::ostringstream html;
  html << "<!doctype html><html><head><meta charset='utf-8'><title>vtp-profile report</title><style>"
          "body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;margin:1em 0}"
          "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#eee}td:first-child{text-align:left}"
          ".miss{background:#fdd}.ok{background:#dfd}figure{display:inline-block;margin:1em}</style></head><body>";
  html << "<h1>vtp-profile</h1><p>World: " << escape(report.value("/mesh/world"_json_pointer, std::string("?")))
       << "; machine: " << escape(report.value("/machine/cpu"_json_pointer, std::string("?"))) << "; build: "
       << escape(report.value("/build/flags"_json_pointer, std::string("?"))) << "</p>";
  // The summary: every figure with a target, ours against it.
  html << "<h2>Summary</h2><table id='summary'><tr><th>measure</th><th>value</th><th>target</th></tr>";
  auto row = [&](const std::string& name, const char* pointer, double target, bool at_most) {
    const nlohmann::json::json_pointer p(pointer);
    const nlohmann::json v = report.contains(p) ? report.at(p) : nlohmann::json(nullptr);
    const bool ok = v.is_number() && (at_most ? v.get<double>() <= target : v.get<double>() >= target);
    html << "<tr class='" << (ok ? "ok" : "miss") << "'><td>" << escape(name) << "</td><td>" << fmt(v) << "</td><td>"
         << (at_most ? "≤ " : "≥ ") << num(target) << "</td></tr>";
  };
  row("collider bytes per triangle", "/collider/bytes_per_triangle", 14, true);
  row("build for rays and gathers (no edge flags) vs Bullet quantised", "/ratios/build_vs_bullet_quantized", 0.08,
      true);
  row("long ray vs Bullet", "/ratios/long_ray_vs_bullet", 0.20, true);
  row("short ray vs Bullet", "/ratios/short_ray_vs_bullet", 0.30, true);
  row("AABB gather (ids) vs Bullet", "/ratios/aabb_vs_bullet", 0.30, true);
  row("AABB gather with vertices vs Bullet", "/ratios/aabb_with_vertices_vs_bullet", 0.40, true);
  for (const char* bucket : {"small", "typical", "large"}) {
    const std::string b = bucket;
    row(b + " chunks: long ray vs Bullet", ("/ratios/by_bucket/" + b + "/long_ray_vs_bullet").c_str(), 0.23, true);
    row(b + " chunks: short ray vs Bullet", ("/ratios/by_bucket/" + b + "/short_ray_vs_bullet").c_str(), 0.345, true);
    row(b + " chunks: AABB vs Bullet", ("/ratios/by_bucket/" + b + "/aabb_vs_bullet").c_str(), 0.345, true);
  }
  row("mismatches (ours)", "/mismatches/ours", 0, true);
  row("mesher ns per triangle", "/mesh/ns_per_triangle", 12, true);
  row("mask build ns per chunk", "/masks/median_ns_per_chunk", 60, true);
  row("mask query ns per chunk", "/masks/query_ns_per_chunk", 10, true);
  row("mask false-pair rejection", "/masks/false_pair_rejection", 0.95, false);
  html << "</table><p>Bucket targets are the row targets × 1.15. Mismatches by Bullet against the same oracle: "
       << figure(report, "/mismatches/bullet") << ". Cache: hit rate " << figure(report, "/cache/hit_rate")
       << ", evictions " << figure(report, "/cache/evictions") << ".</p>";
  // Layouts side by side, the published one as the reference row.
  html << "<h2>Layouts</h2><table id='layouts'><tr><th>layout</th><th>bytes / triangle</th><th>build ns / triangle</th>"
          "<th>long ray vs Bullet</th><th>short ray vs Bullet</th></tr>";
  auto layout = [&](const std::string& name, const std::string& bytes, const std::string& build, const std::string& lng,
                    const std::string& shrt) {
    auto get = [&](const std::string& p) { return p.empty() ? std::string("1") : figure(report, p); };
    html << "<tr><td>" << escape(name) << "</td><td>" << get(bytes) << "</td><td>" << get(build) << "</td><td>"
         << get(lng) << "</td><td>" << get(shrt) << "</td></tr>";
  };
  layout("ours: flat SIMD leaf boxes over the kD clusters", "/collider/bytes_per_triangle",
         "/collider/build_ns_per_triangle", "/ratios/long_ray_vs_bullet", "/ratios/short_ray_vs_bullet");
  layout("reference: published loose kD (12-byte nodes, 2-triangle leaves, scalar walk) over our 16-bit mesh",
         "/collider/reference/bytes_per_triangle", "/collider/reference/build_ns_per_triangle",
         "/collider/reference/long_ray_vs_bullet", "/collider/reference/short_ray_vs_bullet");
  layout("Bullet btBvhTriangleMeshShape, quantised", "/collider/bullet_quantized_bytes_per_triangle",
         "/collider/bullet_quantized_build_ns_per_triangle", "", "");
  layout("Bullet btBvhTriangleMeshShape, plain", "/collider/bullet_plain_bytes_per_triangle",
         "/collider/bullet_plain_build_ns_per_triangle", "", "");
  html << "</table><p>Builds are the collider as rays and box gathers get it, without edge flags (Bullet's BVH has "
          "none either); with the edge flags, from the same mesh, "
       << figure(report, "/collider/build_with_edge_flags_ns_per_triangle") << " ns per triangle, "
       << figure(report, "/ratios/build_with_edge_flags_vs_bullet_quantized") << " of Bullet's quantised build. "
       << "Builds with what contacts need, as each side runs them: ours from the wide-apron mesh, as the "
          "collider cache builds (chunk-seam edges classified against the neighbours' triangles), "
       << figure(report, "/collider/as_cached/build_ns_per_triangle") << " ns per triangle: "
       << figure(report, "/ratios/build_as_cached_vs_bullet_quantized") << " of Bullet's quantised build, "
       << figure(report, "/ratios/build_as_cached_vs_bullet_with_edge_info")
       << " of that build plus btGenerateInternalEdgeInfo ("
       << figure(report, "/collider/as_cached/bullet_edge_info_ns_per_triangle")
       << " ns per triangle), the counterpart of our edge flags.</p>";
  std::vector<double> bytes_per_tri, build_ns;
  for (const ChunkRow& r : rows) {
    if (r.triangles == 0) continue;
    bytes_per_tri.push_back(double(r.bytes) / r.triangles);
    build_ns.push_back(r.build_ns);
  }
  html << "<h2>Chunks</h2><p>" << rows.size() << " surface chunks.</p>";
  html << histogram(bytes_per_tri, "Collider bytes per triangle, per chunk", "B/tri");
  html << histogram(build_ns, "Collider build time per chunk", "ns");
  html << scatter(rows) << topDownMap(rows);
  html << "<h2>Full report</h2><pre>" << escape(report.dump(1)) << "</pre></body></html>\n";
  return writeOutputFile(html.str(), path);
}

}  // namespace vtp::tools
