#!/usr/bin/env bash
# The tools on file names that are not UTF-8 (a byte 0xff): each run succeeds and its JSON report is valid, with the
# name's non-ASCII bytes shown as '?' (the JSON library refuses invalid UTF-8; the tools once aborted on it).
#   check_non_utf8_paths.sh VTP_WORLDGEN VTP_PROFILE VTP_SIM
set -u
worldgen=$1 profile=$2 sim=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/vtp_non_utf8.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
world="$work/bad"$'\xff'".vtw"
failures=0
check() {  # check NAME REPORT: the report is valid JSON and names the world with '?' for the 0xff byte
  if ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$2" 2>/dev/null; then
    echo "FAIL: $1 wrote no valid JSON report" >&2
    failures=$((failures + 1))
  elif ! grep -q 'bad?\.vtw' "$2"; then
    echo "FAIL: $1's report does not name the world as bad?.vtw" >&2
    failures=$((failures + 1))
  fi
}
"$worldgen" --preset flat --size 64,32,64 --out "$world" --json "$work/worldgen.json" ||
  { echo "FAIL: vtp-worldgen exit $?" >&2; exit 1; }
check vtp-worldgen "$work/worldgen.json"
"$profile" "$world" --sections mesh --json "$work/profile.json" 2>/dev/null ||
  { echo "FAIL: vtp-profile exit $?" >&2; exit 1; }
check vtp-profile "$work/profile.json"
"$sim" --world "$world" --bodies 5 --collision vtp --seconds 0.1 --json "$work/sim.json" 2>/dev/null ||
  { echo "FAIL: vtp-sim exit $?" >&2; exit 1; }
check vtp-sim "$work/sim.json"
exit $((failures > 0))
