#pragma once
// Wavefront OBJ output of a CollisionMesh: `v x y z` lines in voxel units, then one `g <material>` group per material
// with its `f a b c` triangles in the mesher's winding. Coordinates are printed as the shortest exact decimal ("12",
// "-0.5", "3.0009765625"): every multiple of 1/1024 has at most 10 decimals, so this is exact where "%.9g" would
// round (100.0009765625 has 13 significant digits). Deterministic: the same mesh gives the same bytes.

#include <filesystem>
#include <string>

#include "collision_mesh.h"
#include "vtp/terrain/material_table.h"
#include "vtp/terrain/status.h"

namespace vtp::tools::world {

/// Writes `mesh` to `path`; `header` becomes `#` comment lines at the top. Group names come from `materials` ("m<id>"
/// for an id the table lacks). kIo, naming the path, on any write failure; a partial regular file is removed.
Status writeObj(const CollisionMesh& mesh, const terrain::MaterialTable& materials, const std::string& header,
                const std::filesystem::path& path);

}  // namespace vtp::tools::world
