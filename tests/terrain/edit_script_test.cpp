#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "support/random_world.h"
#include "support/alloc_probe.h"
#include "vtp/terrain/edit_script.h"
#include "vtp/terrain/hash.h"
#include "vtp/terrain/world.h"

using namespace vtp::terrain;

namespace {

// Parses a one-edit script and returns its edit; fails the test on an error or a different edit count.
EditCommand parseOne(const std::string& line) {
  INFO("line: " << line);
  auto script = parseEditScript(line, MaterialTable::defaults());
  if (!script) FAIL_CHECK(script.error().message);
  REQUIRE(script.ok());
  REQUIRE(script->edits.size() == 1);
  return script->edits[0];
}

ShapeEdit shapeOf(const EditCommand& c) {
  REQUIRE(std::holds_alternative<ShapeEdit>(c));
  return std::get<ShapeEdit>(c);
}

// Parses `script` expecting an error at `line` whose message contains `needle`.
void expectRejected(const std::string& script, std::uint32_t line, const std::string& needle) {
  INFO("script: " << script);
  auto parsed = parseEditScript(script, MaterialTable::defaults());
  REQUIRE_FALSE(parsed.ok());
  const std::string& message = parsed.error().message;
  INFO("message: " << message);
  CHECK(message.rfind(std::to_string(line) + ": ", 0) == 0);
  CHECK(message.find(needle) != std::string::npos);
  CHECK(message.find('\n') == std::string::npos);
}

}  // namespace

TEST_CASE("EditScript: lines parse to their edits and bad lines and rejected scripts are named by line number") {
  SUBCASE("a sphere fill parses to a sphere shape edit with its centre, radius and material") {
    const ShapeEdit e = shapeOf(parseOne("sphere fill center=10,20,-5 radius=6 material=rock"));
    CHECK(e.op == EditOp::kFill);
    CHECK(e.material == 2);
    const auto& s = std::get<SphereShape>(e.shape);
    CHECK(s.center == Vec3d{10, 20, -5});
    CHECK(s.radius == 6.0);
  }

  SUBCASE("a sphere clear parses without a material and a sphere paint with one") {
    const ShapeEdit c = shapeOf(parseOne("sphere clear center=0.5,-1.25,3e1 radius=2.5"));
    CHECK(c.op == EditOp::kClear);
    CHECK(c.material == kAirMaterial);
    CHECK(std::get<SphereShape>(c.shape).center == Vec3d{0.5, -1.25, 30});
    CHECK(std::get<SphereShape>(c.shape).radius == 2.5);
    const ShapeEdit p = shapeOf(parseOne("sphere paint center=0,5,0 radius=4 material=grass"));
    CHECK(p.op == EditOp::kPaint);
    CHECK(p.material == 5);
  }

  SUBCASE("box fill, clear and paint parse to box shapes with double corners") {
    const ShapeEdit f = shapeOf(parseOne("box fill min=-4,0,-4 max=4,8.5,4 material=dirt"));
    CHECK(f.op == EditOp::kFill);
    CHECK(f.material == 3);
    CHECK(std::get<BoxShape>(f.shape).min == Vec3d{-4, 0, -4});
    CHECK(std::get<BoxShape>(f.shape).max == Vec3d{4, 8.5, 4});
    const ShapeEdit c = shapeOf(parseOne("box clear min=-4,0,-4 max=4,8,4"));
    CHECK(c.op == EditOp::kClear);
    CHECK(std::get<BoxShape>(c.shape).max == Vec3d{4, 8, 4});
    const ShapeEdit p = shapeOf(parseOne("box paint max=1,1,1 min=0,0,0 material=6"));
    CHECK(p.op == EditOp::kPaint);
    CHECK(p.material == 6);
    CHECK(std::get<BoxShape>(p.shape).min == Vec3d{0, 0, 0});
  }

  SUBCASE("cylinder fill, clear and paint parse to cylinder shapes with radius and height") {
    const ShapeEdit f = shapeOf(parseOne("cylinder fill center=0,0,0 radius=3 height=10 material=dirt"));
    CHECK(f.op == EditOp::kFill);
    CHECK(f.material == 3);
    const auto& s = std::get<CylinderShape>(f.shape);
    CHECK(s.center == Vec3d{0, 0, 0});
    CHECK(s.radius == 3.0);
    CHECK(s.height == 10.0);
    CHECK(shapeOf(parseOne("cylinder clear center=1,2,3 radius=1 height=2")).op == EditOp::kClear);
    const ShapeEdit p = shapeOf(parseOne("cylinder paint height=2 radius=1 center=1,2,3 material=sand"));
    CHECK(p.op == EditOp::kPaint);
    CHECK(p.material == 4);
    CHECK(std::get<CylinderShape>(p.shape).center == Vec3d{1, 2, 3});
  }

  SUBCASE("replace parses to a replace edit over an integer box") {
    const EditCommand c = parseOne("replace from=rock to=sand min=-8,0,-8 max=8,8,8");
    REQUIRE(std::holds_alternative<ReplaceEdit>(c));
    const auto& r = std::get<ReplaceEdit>(c);
    CHECK(r.from == 2);
    CHECK(r.to == 4);
    CHECK(r.box == VoxelBox{{-8, 0, -8}, {8, 8, 8}});
  }

  SUBCASE("voxel set parses to a set-voxel edit, and occupancy 0 yields air") {
    const EditCommand c = parseOne("voxel set at=3,4,5 material=rock occupancy=200");
    REQUIRE(std::holds_alternative<SetVoxelEdit>(c));
    CHECK(std::get<SetVoxelEdit>(c).at == VoxelCoord{3, 4, 5});
    CHECK(std::get<SetVoxelEdit>(c).value == Voxel{2, 200});
    CHECK(std::get<SetVoxelEdit>(parseOne("voxel set at=-1,-2,-3 material=rock occupancy=0")).value == kAir);
    CHECK(std::get<SetVoxelEdit>(parseOne("voxel set at=0,0,0 material=water occupancy=255")).value == Voxel{1, 255});
    CHECK(std::get<SetVoxelEdit>(parseOne("voxel set at=0,0,0 material=air occupancy=9")).value == kAir);
  }

  SUBCASE("materials may be table names, numeric ids, air or water") {
    CHECK(shapeOf(parseOne("sphere fill center=0,0,0 radius=1 material=water")).material == kWaterMaterial);
    CHECK(shapeOf(parseOne("sphere fill center=0,0,0 radius=1 material=6")).material == 6);
    CHECK(shapeOf(parseOne("sphere fill center=0,0,0 radius=1 material=air")).material == kAirMaterial);
    MaterialTable custom = MaterialTable::defaults();
    REQUIRE(custom.define(200, {"basalt", 0.9f, 0.1f, 2900.0f}).ok());
    auto script = parseEditScript("replace from=basalt to=200 min=0,0,0 max=1,1,1", custom);
    REQUIRE(script.ok());
    CHECK(std::get<ReplaceEdit>(script->edits[0]).from == 200);
  }

  SUBCASE("comments, blank lines, tabs and CRLF line ends are ignored and lines are numbered from 1") {
    const std::string text =
        "# terrain for the spawn area\n"
        "\n"
        "   \t\n"
        "sphere fill center=0,0,0 radius=2 material=rock   # the hill\r\n"
        "\tbox\tclear\tmin=0,0,0\tmax=1,1,1\r\n"
        "#voxel set at=0,0,0 material=rock occupancy=1\n"
        "voxel set at=1,1,1 material=dirt occupancy=7";
    auto script = parseEditScript(text, MaterialTable::defaults());
    REQUIRE(script.ok());
    REQUIRE(script->edits.size() == 3);
    CHECK(script->lines == std::vector<std::uint32_t>{4, 5, 7});
    CHECK(std::holds_alternative<SetVoxelEdit>(script->edits[2]));
  }

  SUBCASE("an empty script parses to no edits") {
    auto script = parseEditScript("", MaterialTable::defaults());
    REQUIRE(script.ok());
    CHECK(script->edits.empty());
  }

  SUBCASE("parseEditLine returns nothing for a comment and the edit for an edit line, without a line number") {
    auto blank = parseEditLine("   # nothing here", MaterialTable::defaults());
    REQUIRE(blank.ok());
    CHECK_FALSE(blank->has_value());
    auto edit = parseEditLine("box fill min=0,0,0 max=1,1,1 material=rock", MaterialTable::defaults());
    REQUIRE(edit.ok());
    CHECK(edit->has_value());
    auto bad = parseEditLine("blob fill", MaterialTable::defaults());
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message.rfind("unknown shape 'blob'", 0) == 0);
  }

  SUBCASE("every malformed line is rejected with its line number and the problem named") {
    struct Case {
      std::string line;
      std::string needle;
    };
    const std::vector<Case> cases = {
        {"blob fill center=0,0,0 radius=1 material=rock", "unknown shape 'blob'"},
        {"Sphere fill center=0,0,0 radius=1 material=rock", "unknown shape 'Sphere'"},
        {"sphere", "missing op"},
        {"sphere dig center=0,0,0 radius=1", "unknown op 'dig'"},
        {"sphere set center=0,0,0 radius=1", "unknown op 'set'"},
        {"voxel fill at=0,0,0 material=rock occupancy=1", "unknown op 'fill'"},
        {"voxel", "missing op"},
        {"sphere fill center=0,0,0 radius=1 material=rock colour=red", "unknown key 'colour'"},
        {"box fill min=0,0,0 max=1,1,1 radius=1 material=rock", "unknown key 'radius'"},
        {"replace from=rock to=sand min=0,0,0 max=1,1,1 material=rock", "unknown key 'material'"},
        {"sphere fill center=0,0,0 radius=1 radius=2 material=rock", "duplicate key 'radius'"},
        {"voxel set at=0,0,0 at=1,1,1 material=rock occupancy=1", "duplicate key 'at'"},
        {"sphere fill center=0,0,0 material=rock", "missing key 'radius'"},
        {"sphere fill center=0,0,0 radius=1", "missing key 'material'"},
        {"sphere paint center=0,0,0 radius=1", "missing key 'material'"},
        {"cylinder fill center=0,0,0 radius=1 material=rock", "missing key 'height'"},
        {"replace from=rock min=0,0,0 max=1,1,1", "missing key 'to'"},
        {"voxel set at=0,0,0 material=rock", "missing key 'occupancy'"},
        {"sphere clear center=0,0,0 radius=1 material=rock", "sphere clear takes no material"},
        {"box clear min=0,0,0 max=1,1,1 material=air", "box clear takes no material"},
        {"cylinder clear center=0,0,0 radius=1 height=1 material=rock", "cylinder clear takes no material"},
        {"sphere fill center=0,0 radius=1 material=rock", "three comma-separated"},
        {"sphere fill center=0,0,0,0 radius=1 material=rock", "three comma-separated"},
        {"sphere fill center=0,,0 radius=1 material=rock", "'' is not a number"},
        {"sphere fill center=0,0,0 radius=1x material=rock", "'1x' is not a number"},
        {"sphere fill center=0,0,0 radius=+1 material=rock", "'+1' is not a number"},
        {"sphere fill center=0,0,0 radius= material=rock", "'radius' has no value"},
        {"sphere fill center=0,0,0 radius=nan material=rock", "'nan' is not a finite number"},
        {"sphere fill center=0,inf,0 radius=1 material=rock", "'inf' is not a finite number"},
        {"box fill min=-infinity,0,0 max=1,1,1 material=rock", "'-infinity' is not a finite number"},
        {"sphere fill center=0,0,0 radius=1e999 material=rock", "out of range"},
        {"replace from=rock to=sand min=0,0,0.5 max=1,1,1", "'0.5' is not an integer"},
        {"replace from=rock to=sand min=0,0,0 max=1,1,9999999999", "outside the 32-bit integer range"},
        {"voxel set at=0,0,0 material=rock occupancy=256", "occupancy: '256' is not an integer in 0..255"},
        {"voxel set at=0,0,0 material=rock occupancy=-1", "occupancy: '-1'"},
        {"sphere fill center=0,0,0 radius=1 material=granite", "unknown material 'granite'"},
        {"sphere fill center=0,0,0 radius=1 material=99", "unknown material '99'"},
        {"replace from=rock to=256 min=0,0,0 max=1,1,1", "to: unknown material '256'"},
        {"sphere fill center=0,0,0 radius=1 material=rock junk", "unexpected 'junk'"},
        {"sphere fill center=0,0,0 radius=1 material=rock =5", "unexpected '=5'"},
        {"replace fill from=rock to=sand min=0,0,0 max=1,1,1", "unexpected 'fill'"},
        // Words are separated by spaces and tabs only; one CR may end a line (CRLF), no other control byte.
        {"box clear min=0,0,0 max=1,1,1\v", "'1?' is not a number"},
        {"box clear min=0,0,0 max=1,1,1\r\r", "'1?' is not a number"},
        {"box clear min=0,0,0\fmax=1,1,1", "missing key 'max'"},  // one word: min = "0,0,0\fmax=1,1,1"
        {"box\rclear min=0,0,0 max=1,1,1", "unknown shape 'box?clear'"},
    };
    for (const Case& c : cases) {
      // The bad line is the third, after a comment and a good edit.
      expectRejected("# header\nbox fill min=0,0,0 max=1,1,1 material=rock\n" + c.line + "\nbox clear min=0,0,0 max=1,1,1\n",
                     3, c.needle);
    }
  }

  SUBCASE("control bytes in a bad line are not echoed into the one-line message") {
    expectRejected(std::string("\n\nsph\x01\x7f" "ere fill"), 3, "unknown shape 'sph??ere'");
  }

  SUBCASE("a script applied to a world gives the same content hash as the same edits made through the API") {
    const std::string text =
        "sphere fill center=10,20,-5 radius=6 material=rock\n"
        "box fill min=-4,0,-4 max=4,8,4 material=dirt\n"
        "box clear min=-1.5,2,-1.5 max=1.5,9,1.5\n"
        "cylinder fill center=0,0,0 radius=3 height=10 material=sand\n"
        "cylinder clear center=0,3,0 radius=1.5 height=2\n"
        "sphere paint center=0,5,0 radius=4 material=grass\n"
        "replace from=rock to=ore min=-8,0,-8 max=16,32,8\n"
        "voxel set at=3,4,5 material=rock occupancy=200\n"
        "voxel set at=10,20,-5 material=rock occupancy=0\n"
        "sphere fill center=-20,-3,7 radius=5 material=water\n"
        "sphere clear center=10,20,-5 radius=2\n";
    auto scripted = vtp::test::makeWorld();
    auto script = parseEditScript(text, scripted->materials());
    REQUIRE(script.ok());
    REQUIRE(script->edits.size() == 11);
    REQUIRE(applyEditScript(*scripted, *script).ok());

    auto direct = vtp::test::makeWorld();
    REQUIRE(direct->fillSphere({10, 20, -5}, 6, 2).ok());
    REQUIRE(direct->fillBox({{-4, 0, -4}, {4, 8, 4}}, 3).ok());
    REQUIRE(direct->apply(ShapeEdit{BoxShape{{-1.5, 2, -1.5}, {1.5, 9, 1.5}}, EditOp::kClear, 0}).ok());
    REQUIRE(direct->fillCylinder({0, 0, 0}, 3, 10, 4).ok());
    REQUIRE(direct->clearCylinder({0, 3, 0}, 1.5, 2).ok());
    REQUIRE(direct->paintSphere({0, 5, 0}, 4, 5).ok());
    REQUIRE(direct->replace({{-8, 0, -8}, {16, 32, 8}}, 2, 6).ok());
    REQUIRE(direct->setVoxel({3, 4, 5}, {2, 200}).ok());
    REQUIRE(direct->setVoxel({10, 20, -5}, kAir).ok());
    REQUIRE(direct->fillSphere({-20, -3, 7}, 5, 1).ok());
    REQUIRE(direct->clearSphere({10, 20, -5}, 2).ok());

    CHECK(direct->stats().stored_chunks > 0);
    CHECK(vtp::test::contentHash(*scripted) == vtp::test::contentHash(*direct));
  }

  SUBCASE("a script that World::apply rejects changes nothing and names the offending line") {
    auto world = vtp::test::makeWorld();
    std::mt19937_64 rng(7);
    vtp::test::randomEdits(*world, {{-16, -16, -16}, {16, 16, 16}}, 20, rng);
    const std::uint64_t before = vtp::test::contentHash(*world);
    const std::string text =
        "sphere fill center=0,0,0 radius=4 material=rock\n"
        "# a radius over the cap of 64\n"
        "sphere fill center=0,0,0 radius=65 material=rock\n";
    auto script = parseEditScript(text, world->materials());
    REQUIRE(script.ok());
    auto applied = applyEditScript(*world, *script);
    REQUIRE_FALSE(applied.ok());
    CHECK(applied.error().code == vtp::ErrorCode::kLimitExceeded);
    CHECK(applied.error().message.rfind("3: ", 0) == 0);
    CHECK(vtp::test::contentHash(*world) == before);

    auto paint_water = parseEditScript("\n\nsphere paint center=0,0,0 radius=2 material=water", world->materials());
    REQUIRE(paint_water.ok());
    auto rejected = applyEditScript(*world, *paint_water);
    REQUIRE_FALSE(rejected.ok());
    CHECK(rejected.error().message.rfind("3: paint material cannot be water", 0) == 0);

    auto empty_box = parseEditScript("box fill min=0,0,0 max=0,1,1 material=rock", world->materials());
    REQUIRE(empty_box.ok());
    CHECK(applyEditScript(*world, *empty_box).error().message.rfind("1: ", 0) == 0);
    CHECK(vtp::test::contentHash(*world) == before);
  }

  SUBCASE("a script over the batch cap names the line whose edit crosses it") {
    WorldConfig config;
    config.limits.max_edit_voxels = 1000;
    config.limits.max_batch_voxels = 2000;
    auto world = vtp::test::makeWorld(config);
    const std::string text =
        "box fill min=0,0,0 max=10,10,9 material=rock\n"   // 900 voxels
        "box fill min=0,0,0 max=10,10,9 material=rock\n"   // 1800
        "box fill min=0,0,0 max=10,10,3 material=rock\n";  // 2100: over
    auto script = parseEditScript(text, world->materials());
    REQUIRE(script.ok());
    auto applied = applyEditScript(*world, *script);
    REQUIRE_FALSE(applied.ok());
    CHECK(applied.error().code == vtp::ErrorCode::kLimitExceeded);
    CHECK(applied.error().message.rfind("3: ", 0) == 0);
    CHECK(world->stats().stored_chunks == 0);
  }
}

TEST_CASE("EditScript: a line of a million words is refused for its first bad word, in memory of a few words") {
  using namespace vtp::test::alloc_probe;
  std::string line = "sphere fill";
  for (int i = 0; i < 1000000; ++i) line += " a";
  const MaterialTable materials = MaterialTable::defaults();
  g_probe_largest = 0;
  g_probe_armed = true;
  const auto parsed = parseEditLine(line, materials);
  g_probe_armed = false;
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.error().message.find("unexpected 'a'") != std::string::npos);
  CHECK(g_probe_largest.load() <= 1024);  // every word's view kept: 16 MB
}
