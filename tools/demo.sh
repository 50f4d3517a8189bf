#!/usr/bin/env bash
# Quick start, command 1: installs what is missing, builds Release into build/, and runs the main job on the shipped
# default world: regenerate the default world and prove it is the committed one, inspect and validate it, export its
# collision mesh, profile it (JSON, CSV and HTML reports), and run vtp-sim on it (both collision modes side by side).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
world=data/worlds/default.vtw
out=build/demo
mkdir -p "$out"
build/tools/worldgen/vtp-worldgen --preset default --out "$out/default.vtw"
cmp "$out/default.vtw" "$world" && echo "demo: regenerated default world is byte-identical to $world"
build/tools/world/vtp-world check "$world"
build/tools/world/vtp-world info "$world" --json "$out/info.json"
build/tools/world/vtp-world export-obj "$world" --out "$out/terrain.obj" --png "$out/terrain.png"
build/tools/profile/vtp-profile "$world" --json "$out/profile.json" --csv "$out/profile.csv" --html "$out/profile.html"
build/tools/sim/vtp-sim --world "$world" --bodies 1000 --seconds 10 --json "$out/sim.json"
echo "demo: reports in $out/info.json, $out/profile.json, $out/profile.csv, $out/profile.html and $out/sim.json; collision mesh in $out/terrain.obj and $out/terrain.png"
