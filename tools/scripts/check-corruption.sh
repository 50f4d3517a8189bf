#!/usr/bin/env bash
# Acceptance check for `vtp-world check`: every damaged copy of a valid world must be rejected cleanly.
#
#   tools/scripts/check-corruption.sh WORLD [N]
#
# Makes N copies of WORLD (default 10000) with one byte changed (offset and xor mask drawn from a seeded generator,
# so a run is reproducible), and one truncation at every record boundary -2..+2 bytes (boundaries: start of file, end
# of header, end of each record; the layout is in terrain/src/world_format.h). Each copy is checked with
# `timeout 5 vtp-world check COPY`, which must exit with status exactly 1 and write exactly one line to stderr: no
# other status, no signal, no timeout. WORLD itself must pass (exit 0) first.
#
# Environment: VTP_WORLD  path of the vtp-world executable (default: on PATH, else build*/tools/world/vtp-world)
#              SEED       generator seed (default 1)
#              JOBS       copies checked in parallel (default 1)
#              KEEP_FAILED=DIR  copy each failing input into DIR
# Prints "N passed, M failed" last; exits 0 when M is 0, 1 when some copy failed, 2 on a usage or setup error.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 || "$1" == "-h" || "$1" == "--help" ]]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
  [[ $# -ge 1 && ( "$1" == "-h" || "$1" == "--help" ) ]] && exit 0
  exit 2
fi
world=$1
count=${2:-10000}
[[ -f "$world" ]] || { echo "check-corruption: $world is not a file" >&2; exit 2; }
[[ "$count" =~ ^[0-9]+$ ]] || { echo "check-corruption: N must be a non-negative integer, got '$count'" >&2; exit 2; }

tool=${VTP_WORLD:-}
if [[ -z "$tool" ]]; then
  if command -v vtp-world > /dev/null; then
    tool=$(command -v vtp-world)
  else
    root=$(cd "$(dirname "$0")/../.." && pwd)
    tool=$(ls -t "$root"/build*/tools/world/vtp-world 2> /dev/null | head -n 1 || true)
  fi
fi
[[ -n "$tool" && -x "$tool" ]] || { echo "check-corruption: vtp-world not found (set VTP_WORLD)" >&2; exit 2; }

exec python3 - "$tool" "$world" "$count" "${SEED:-1}" "${JOBS:-1}" "${KEEP_FAILED:-}" << 'PY'
import concurrent.futures, os, random, shutil, struct, subprocess, sys, tempfile, time

tool, world, count, seed, jobs, keep = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
data = open(world, "rb").read()

def record_boundaries(b):
    """Offsets where the header and each record end (world_format.h); stops at the first framing problem."""
    if len(b) < 46 or b[:8] != b"VTPWORLD":
        sys.exit("check-corruption: %s is not a vtp world file" % world)
    h = struct.unpack_from("<I", b, 12)[0]
    out, at = [0, h], h
    while at < len(b):
        kind = b[at + 12]
        if kind == 1:
            at += 19
        elif kind == 2:
            at += 21 + struct.unpack_from("<I", b, at + 13)[0]
        else:
            sys.exit("check-corruption: unknown record kind %d at byte %d" % (kind, at))
        out.append(at)
    if at != len(b):
        sys.exit("check-corruption: records do not end at the end of the file")
    return out

def check(path):
    """(ok, reason) for one `vtp-world check`: exit 1 with exactly one stderr line."""
    try:
        p = subprocess.run(["timeout", "5", tool, "check", path], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=30)
    except subprocess.TimeoutExpired:
        return False, "hung past timeout(1)"
    err = p.stderr.decode("utf-8", "replace")
    lines = err.splitlines()
    if p.returncode == 124:
        return False, "timeout after 5 s"
    if p.returncode < 0 or p.returncode > 128:
        sig = -p.returncode if p.returncode < 0 else p.returncode - 128
        return False, "killed by signal %d; stderr: %s" % (sig, " | ".join(lines[-3:]))
    if p.returncode != 1:
        return False, "exit %d (want 1); stderr: %s" % (p.returncode, " | ".join(lines[:3]))
    if len(lines) != 1 or not lines[0].strip() or not err.endswith("\n"):
        return False, "%d stderr lines (want 1): %r" % (len(lines), err[:300])
    return True, lines[0]

probe = subprocess.run(["timeout", "5", tool, "check", world], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
if probe.returncode != 0:
    sys.exit("check-corruption: the intact world does not pass `vtp-world check` (exit %d): %s"
             % (probe.returncode, probe.stderr.decode("utf-8", "replace").strip()))

rng = random.Random(seed)
cases = []
for _ in range(count):
    cases.append(("flip", rng.randrange(len(data)), rng.randrange(1, 256)))
lengths = sorted({n for b in record_boundaries(data) for n in range(b - 2, b + 3) if 0 <= n < len(data)})
cases += [("cut", n, 0) for n in lengths]

tmp = tempfile.mkdtemp(prefix="vtp-check-corruption-")
def run(i_case):
    i, (kind, at, mask) = i_case
    path = os.path.join(tmp, "case%d.vtw" % i)
    if kind == "flip":
        b = bytearray(data)
        b[at] ^= mask
    else:
        b = data[:at]
    with open(path, "wb") as f:
        f.write(b)
    ok, reason = check(path)
    if not ok and keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copy(path, os.path.join(keep, "%s-%d-%d.vtw" % (kind, at, mask)))
    os.unlink(path)
    return kind, at, mask, ok, reason

t0 = time.monotonic()
passed, failed, shown = 0, 0, 0
try:
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for kind, at, mask, ok, reason in pool.map(run, enumerate(cases)):
            if ok:
                passed += 1
                continue
            failed += 1
            if shown < 20:
                shown += 1
                what = "byte %d xor 0x%02x" % (at, mask) if kind == "flip" else "truncated to %d bytes" % at
                print("FAIL %s: %s" % (what, reason), flush=True)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("%s: %d bytes, %d byte flips (seed %d) + %d truncations at %d record boundaries, %.1f s"
      % (world, len(data), count, seed, len(lengths), len(record_boundaries(data)), time.monotonic() - t0))
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
PY
