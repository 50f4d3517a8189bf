#!/usr/bin/env python3
"""How flat the smooth mesher makes the 15-degree slope of the physics rolling-ball test, under variants of its rules.

The test writes rock below y = x tan(15 deg), each voxel filled to the plane's height at its column's centre and
rounded to 8 bits (tests/physics/bullet_terrain_test.cpp). The slope is uniform along z, so the mesh is a profile in
x-y: each cell's vertex is the mean of the crossings on its active edges (surface_mesher.h). This script rebuilds that
profile in exact rational arithmetic (fractions) under each variant and prints the largest facet tilt (the angle between a facet and the
plane) and the largest kink (the angle between neighbouring facets), in radians, over x in (-40, 40).

A ball rolling over a facet tilted by a changes its vertical speed by about v a; over a convex kink k it leaves the
surface and lands again about v k later (a real flight, not a solver artefact). At the test's 7-8 m/s the deviation
stays under 0.05 m/s only when tilt + kink stays under about 0.01 rad (the old rules: 0.0151, measured 0.076 m/s).

Variants: the crossing rule ('old': the column rule (e_in + e_out - 127) / 256 and the linear rule rounded to 1/256,
the mesher's rules until 2026-11-22; 'committed': the column rule as (e_in + e_out - 127.5) / 255, exact, and the
linear rule rounded to 1/256; 'exact': both unrounded), the vertex grid
(units per voxel, the mean rounded down as the mesher does; 0 = unrounded), and Gibson's relaxation ("Constrained
Elastic Surface Nets", MERL TR99-24): each vertex moved to the mean of its net neighbours, kept inside its cell (at
weight 1/2, halfway: what the 3D mean of four neighbours gives on this slope, whose two neighbours along z are level).

Usage: python3 data/bench/slope_facets.py [DEGREES]
"""
import math
import sys
from fractions import Fraction as F

DEGREES = float(sys.argv[1]) if len(sys.argv) > 1 else 15.0
THETA = math.radians(DEGREES)
SLOPE = math.tan(THETA)
X0, X1, Y0, Y1 = -48, 48, -16, 16


def occupancy(x, y):
    fill = min(max((x + 0.5) * SLOPE - y, 0.0), 1.0)
    return round(fill * 255)


def crossing(e_in, e_out, rule):
    """Distance from the inside voxel's centre to the crossing, an exact fraction. [voxel]"""
    saturated = e_in == 255 or e_out == 0
    column = F(2 * (e_in + e_out) - 255, 510)  # (e_in + e_out - 127.5) / 255
    linear = F(2 * e_in - 255, 2 * (e_in - e_out))  # (e_in - 127.5) / (e_in - e_out)
    linear_256 = F(math.floor(256 * linear + F(1, 2)), 256)  # rounded to 1/256 (no ties occur)
    if rule == "old":
        return F(e_in + e_out - 127, 256) if saturated else linear_256
    if rule == "committed":
        return column if saturated else linear_256
    return column if saturated else linear


def rounded(v, grid):
    return F(math.floor(v * grid), grid) if grid else v


def profile(rule, grid, relaxations, weight=1.0):
    vertices = []
    for i in range(X0, X1 - 1):
        for j in range(Y0, Y1 - 1):
            points = []
            # The cell's active edges in the x-y plane: two along y (at x = i, i + 1), two along x (at y = j, j + 1).
            for a, b, axis in (((i, j), (i, j + 1), 1), ((i + 1, j), (i + 1, j + 1), 1),
                               ((i, j), (i + 1, j), 0), ((i, j + 1), (i + 1, j + 1), 0)):
                ea, eb = occupancy(*a), occupancy(*b)
                if (ea >= 128) == (eb >= 128):
                    continue
                inside, e_in, e_out, sign = (a, ea, eb, 1) if ea >= 128 else (b, eb, ea, -1)
                p = [inside[0] + F(1, 2), inside[1] + F(1, 2)]
                p[axis] += sign * crossing(e_in, e_out, rule)
                points.append(p)
            if points:
                x = sum(p[0] for p in points) / len(points)
                y = sum(p[1] for p in points) / len(points)
                vertices.append((rounded(x, grid), rounded(y, grid), i, j))
    vertices.sort()
    for _ in range(relaxations):
        moved = [vertices[0]]
        for k in range(1, len(vertices) - 1):
            _, _, i, j = vertices[k]
            x0, y0 = vertices[k][0], vertices[k][1]
            w = F(weight)
            x = (1 - w) * x0 + w * (vertices[k - 1][0] + vertices[k + 1][0]) / 2
            y = (1 - w) * y0 + w * (vertices[k - 1][1] + vertices[k + 1][1]) / 2
            x = min(max(x, i + F(1, 2)), i + F(3, 2))
            y = min(max(y, j + F(1, 2)), j + F(3, 2))
            moved.append((rounded(x, grid), rounded(y, grid), i, j))
        vertices = moved + [vertices[-1]]
    return [(x, y) for x, y, _, _ in vertices if -40 < x < 40]


def main():
    print(f"{DEGREES:g} degree slope: variant -> largest facet tilt, largest kink [rad]")
    for rule, grid, relaxations, weight in (("old", 256, 0, 1.0), ("exact", 256, 0, 1.0), ("old", 1024, 0, 1.0),
                                            ("committed", 1024, 0, 1.0), ("exact", 1024, 0, 1.0), ("exact", 0, 0, 1.0),
                                            ("old", 256, 1, 1.0), ("old", 1024, 1, 1.0), ("old", 1024, 1, 0.5),
                                            ("exact", 1024, 1, 1.0), ("exact", 1024, 2, 1.0)):
        points = profile(rule, grid, relaxations, weight)
        angles = [math.atan2(float(q[1] - p[1]), float(q[0] - p[0])) - THETA for p, q in zip(points, points[1:])]
        kinks = [abs(b - a) for a, b in zip(angles, angles[1:])]
        tilt, kink = max(map(abs, angles)), max(kinks)
        name = f"crossings {rule}, grid {'exact' if grid == 0 else f'1/{grid}'}, {relaxations} relaxation(s)"
        if weight != 1.0:
            name += f" at weight {weight:g}"
        print(f"  {name:66s} {tilt:.4f}  {kink:.4f}  (sum {tilt + kink:.4f})")


if __name__ == "__main__":
    main()
