// Replays the world-file fuzz target over files and directories (every regular file, sorted by name), so the
// committed corpus runs as a ctest in every build, gcc included. `--write-seeds DIR` writes the seed corpus: small
// valid worlds from fixed edits, plus damaged copies of them (truncated, flipped, padded) that must be rejected.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "vtp/terrain/world.h"
#include "vtp/terrain/world_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;
using namespace vtp::terrain;

std::unique_ptr<World> newWorld(WorldConfig config = {}) {
  auto world = World::create(std::move(config));
  if (!world) {
    std::fprintf(stderr, "replay: %s\n", world.error().message.c_str());
    std::exit(1);
  }
  return std::move(world.value());
}

bool writeFile(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  return bool(out);
}

int writeSeeds(const fs::path& dir) {
  std::vector<std::pair<std::string, std::vector<std::uint8_t>>> seeds;
  seeds.emplace_back("empty.vtw", encodeWorld(*newWorld()));

  auto uniform = newWorld();
  (void)uniform->fillBox({{-8, 0, 0}, {8, 8, 8}}, 2);
  (void)uniform->setVoxel({100, -100, 3}, {1, 77});
  seeds.emplace_back("uniform_and_one_voxel.vtw", encodeWorld(*uniform));

  auto sphere = newWorld();
  (void)sphere->fillSphere({-3.5, -2.0, 4.25}, 5.5, 3);
  (void)sphere->fillBox({{-16, -16, -16}, {-8, -12, -8}}, 1);
  (void)sphere->paintSphere({-1.0, 0.0, 2.0}, 2.5, 5);
  seeds.emplace_back("sphere_negative.vtw", encodeWorld(*sphere));

  WorldConfig custom;
  custom.voxel_size = 0.25;
  custom.materials = MaterialTable();
  (void)custom.materials.define(2, {"basalt", 0.9f, 0.2f, 3000.0f});
  (void)custom.materials.define(9, {"ice", 0.05f, 0.0f, 917.0f});
  (void)custom.materials.define(200, {"gold_ore-x", 0.5f, 0.3f, 19300.0f});
  auto table = newWorld(custom);
  (void)table->fillCylinder({0.5, 0.0, 0.5}, 3.0, 6.0, 9);
  (void)table->fillBox({{8, 8, 8}, {16, 16, 16}}, 200);
  (void)table->setVoxel({-1, -1, -1}, {2, 1});
  seeds.emplace_back("custom_materials.vtw", encodeWorld(*table));

  // Damaged copies: the loader must reject each of them.
  const std::vector<std::uint8_t> base = seeds[2].second;  // a copy: `seeds` grows below
  std::vector<std::uint8_t> cut(base.begin(), base.begin() + std::ptrdiff_t(base.size() / 2));
  seeds.emplace_back("bad_truncated.vtw", cut);
  std::vector<std::uint8_t> flipped = base;
  flipped[flipped.size() - 7] ^= 0x10;
  seeds.emplace_back("bad_record_flip.vtw", flipped);
  std::vector<std::uint8_t> header_flip = base;
  header_flip[33] ^= 0x01;
  seeds.emplace_back("bad_header_flip.vtw", header_flip);
  std::vector<std::uint8_t> padded = base;
  padded.resize(padded.size() + 16, 0);
  seeds.emplace_back("bad_zero_tail.vtw", padded);

  fs::create_directories(dir);
  for (const auto& [name, bytes] : seeds) {
    if (!writeFile(dir / name, bytes)) {
      std::fprintf(stderr, "replay: cannot write %s\n", (dir / name).c_str());
      return 1;
    }
    std::printf("%s %zu bytes\n", name.c_str(), bytes.size());
  }
  return 0;
}

int replay(const std::vector<fs::path>& args) {
  std::vector<fs::path> files;
  for (const fs::path& arg : args) {
    if (fs::is_directory(arg)) {
      for (const fs::directory_entry& e : fs::directory_iterator(arg)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else if (fs::is_regular_file(arg)) {
      files.push_back(arg);
    } else {
      std::fprintf(stderr, "replay: %s is neither a file nor a directory\n", arg.c_str());
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "replay: no input files\n");
    return 1;
  }
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.eof() && !in) {
      std::fprintf(stderr, "replay: cannot read %s\n", f.c_str());
      return 1;
    }
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());  // aborts on a finding
  }
  std::printf("replayed %zu inputs\n", files.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--write-seeds") return writeSeeds(argv[2]);
  if (argc < 2 || std::string(argv[1]) == "--help") {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR... | --write-seeds DIR\n", argv[0]);
    return argc < 2 ? 2 : 0;
  }
  return replay(std::vector<fs::path>(argv + 1, argv + argc));
}
