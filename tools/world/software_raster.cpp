// Scanline-free rasterization by edge functions over each triangle's pixel bounding box (Pineda, "A Parallel Algorithm
// for Polygon Rasterization", SIGGRAPH 1988), depth by a z-buffer, then a box filter down to the output size.
#include "software_raster.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace vtp::tools::world {
namespace {

using Vec = std::array<double, 3>;

Vec sub(const Vec& a, const Vec& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
double dot(const Vec& a, const Vec& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec cross(const Vec& a, const Vec& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
Vec normalize(const Vec& a) {
  const double len = std::sqrt(dot(a, a));
  return len > 0 ? Vec{a[0] / len, a[1] / len, a[2] / len} : Vec{0, 0, 0};
}

constexpr Rgb kSkyTop{168, 196, 226};
constexpr Rgb kSkyBottom{232, 237, 242};
constexpr Rgb kCut{74, 64, 58};

struct Camera {
  Vec right, up, forward, toward_eye, light;
};

Camera makeCamera(const RenderView& view) {
  constexpr double kDeg = 3.14159265358979323846 / 180.0;
  const double az = view.azimuth_deg * kDeg, el = std::clamp(view.elevation_deg, 1.0, 89.0) * kDeg;
  Camera c;
  c.toward_eye = {std::cos(el) * std::sin(az), std::sin(el), std::cos(el) * std::cos(az)};
  c.forward = {-c.toward_eye[0], -c.toward_eye[1], -c.toward_eye[2]};
  c.right = normalize(cross(c.forward, {0, 1, 0}));
  c.up = cross(c.right, c.forward);
  // Sun to the upper left of the viewer, a little behind, fairly low so that relief shows: slopes facing left and up
  // are lit.
  c.light = normalize({-0.8 * c.right[0] + 0.3 * c.toward_eye[0], 0.75, -0.8 * c.right[2] + 0.3 * c.toward_eye[2]});
  return c;
}

Rgb background(int y, int height) {
  const double t = height > 1 ? double(y) / double(height - 1) : 0.0;
  auto mix = [t](std::uint8_t a, std::uint8_t b) { return std::uint8_t(std::lround(a + (b - a) * t)); };
  return {mix(kSkyTop.r, kSkyBottom.r), mix(kSkyTop.g, kSkyBottom.g), mix(kSkyTop.b, kSkyBottom.b)};
}

}  // namespace

RgbImage renderOblique(std::span<const std::array<double, 3>> positions,
                       std::span<const std::array<std::uint32_t, 3>> triangles, std::span<const Rgb> colours,
                       const RenderView& view) {
  const int ss = std::clamp(view.supersample, 1, 4);
  const int out_w = std::clamp(view.width, 16, 8192), out_h = std::clamp(view.height, 16, 8192);
  const int w = out_w * ss, h = out_h * ss;
  const Camera cam = makeCamera(view);

  // Screen-space (x right, y up) and depth of every vertex; the scene's screen bounds fix the scale.
  std::vector<Vec> screen(positions.size());
  double min_x = std::numeric_limits<double>::max(), max_x = -min_x, min_y = min_x, max_y = -min_x;
  double min_d = min_x, max_d = -min_x;
  for (std::size_t i = 0; i < positions.size(); ++i) {
    const Vec& p = positions[i];
    screen[i] = {dot(p, cam.right), dot(p, cam.up), dot(p, cam.forward)};
    min_x = std::min(min_x, screen[i][0]);
    max_x = std::max(max_x, screen[i][0]);
    min_y = std::min(min_y, screen[i][1]);
    max_y = std::max(max_y, screen[i][1]);
    min_d = std::min(min_d, screen[i][2]);
    max_d = std::max(max_d, screen[i][2]);
  }
  const double margin = 0.04;
  const double span_x = std::max(max_x - min_x, 1e-9), span_y = std::max(max_y - min_y, 1e-9);
  const double scale = std::min(w * (1 - 2 * margin) / span_x, h * (1 - 2 * margin) / span_y);
  const double cx = 0.5 * (min_x + max_x), cy = 0.5 * (min_y + max_y);
  const double depth_span = std::max(max_d - min_d, 1e-9);
  for (Vec& s : screen) {
    s[0] = 0.5 * w + (s[0] - cx) * scale;
    s[1] = 0.5 * h - (s[1] - cy) * scale;  // image rows grow downwards
  }

  std::vector<float> depth(std::size_t(w) * std::size_t(h), std::numeric_limits<float>::infinity());
  std::vector<Rgb> pixels(std::size_t(w) * std::size_t(h));
  for (int y = 0; y < h; ++y) std::fill_n(pixels.begin() + std::ptrdiff_t(y) * w, w, background(y, h));

  for (std::size_t t = 0; t < triangles.size(); ++t) {
    const auto& tri = triangles[t];
    const Vec &a = screen[tri[0]], &b = screen[tri[1]], &c = screen[tri[2]];
    const double area = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
    if (area == 0) continue;
    // Flat shading from the triangle's own normal; a triangle seen from behind is the inside of a cut.
    const Vec n = normalize(cross(sub(positions[tri[1]], positions[tri[0]]), sub(positions[tri[2]], positions[tri[0]])));
    Rgb colour = kCut;
    const bool front = dot(n, cam.toward_eye) > 0;
    if (front) {
      const double sky = 0.5 + 0.5 * n[1];  // hemisphere ambient: upward faces get more sky light
      const double lambert = std::max(0.0, dot(n, cam.light));
      const double k = 0.2 + 0.15 * sky + 0.8 * lambert;
      const Rgb base = colours[t];
      auto shade = [k](std::uint8_t v) { return std::uint8_t(std::clamp(std::lround(v * k), 0l, 255l)); };
      colour = {shade(base.r), shade(base.g), shade(base.b)};
    }
    // Aerial perspective: far surfaces fade a little towards the sky colour; a cut stays one flat colour.
    const double fog = front ? 0.25 * ((a[2] + b[2] + c[2]) / 3.0 - min_d) / depth_span : 0.0;
    const int x0 = std::max(0, int(std::floor(std::min({a[0], b[0], c[0]}))));
    const int x1 = std::min(w - 1, int(std::ceil(std::max({a[0], b[0], c[0]}))));
    const int y0 = std::max(0, int(std::floor(std::min({a[1], b[1], c[1]}))));
    const int y1 = std::min(h - 1, int(std::ceil(std::max({a[1], b[1], c[1]}))));
    const double inv = 1.0 / area;
    for (int y = y0; y <= y1; ++y) {
      const double py = y + 0.5;
      for (int x = x0; x <= x1; ++x) {
        const double px = x + 0.5;
        const double w0 = ((b[0] - px) * (c[1] - py) - (b[1] - py) * (c[0] - px)) * inv;
        const double w1 = ((c[0] - px) * (a[1] - py) - (c[1] - py) * (a[0] - px)) * inv;
        const double w2 = 1.0 - w0 - w1;
        if (w0 < 0 || w1 < 0 || w2 < 0) continue;
        const float z = float(w0 * a[2] + w1 * b[2] + w2 * c[2]);
        const std::size_t at = std::size_t(y) * std::size_t(w) + std::size_t(x);
        if (z >= depth[at]) continue;
        depth[at] = z;
        const Rgb sky = background(y, h);
        auto mix = [fog](std::uint8_t v, std::uint8_t s) { return std::uint8_t(std::lround(v + (s - v) * fog)); };
        pixels[at] = {mix(colour.r, sky.r), mix(colour.g, sky.g), mix(colour.b, sky.b)};
      }
    }
  }

  // Box filter ss x ss samples into each output pixel.
  RgbImage image;
  image.width = out_w;
  image.height = out_h;
  image.rgb.resize(std::size_t(out_w) * std::size_t(out_h) * 3);
  for (int y = 0; y < out_h; ++y) {
    for (int x = 0; x < out_w; ++x) {
      int sum[3] = {0, 0, 0};
      for (int sy = 0; sy < ss; ++sy) {
        for (int sx = 0; sx < ss; ++sx) {
          const Rgb& p = pixels[std::size_t(y * ss + sy) * std::size_t(w) + std::size_t(x * ss + sx)];
          sum[0] += p.r;
          sum[1] += p.g;
          sum[2] += p.b;
        }
      }
      std::uint8_t* out = &image.rgb[(std::size_t(y) * std::size_t(out_w) + std::size_t(x)) * 3];
      for (int k = 0; k < 3; ++k) out[k] = std::uint8_t((sum[k] + ss * ss / 2) / (ss * ss));
    }
  }
  return image;
}

}  // namespace vtp::tools::world
