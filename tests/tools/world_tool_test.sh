#!/usr/bin/env bash
# vtp-world run on real files (tests/tools/world.cmake registers one ctest per scenario).
#   world_tool_test.sh SCENARIO VTP_WORLD FIXTURE_DIR [README]
# README is tools/README.md, needed by readme_example only.
# Every world is made in a fresh temporary directory from the committed empty default world
# (FIXTURE_DIR/empty.vtw) with `vtp-world edit`, so nothing depends on other tools.
set -u

scenario=$1
# Absolute paths: the scenarios run inside their own temporary directory.
tool=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
fixtures=$(cd "$3" && pwd)
readme=${4:+$(cd "$(dirname "$4")" && pwd)/$(basename "$4")}
empty=$fixtures/empty.vtw

work=$(mktemp -d "${TMPDIR:-/tmp}/vtp_world_test.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

failures=0
fail() {
  echo "FAIL [$scenario]: $*" >&2
  failures=$((failures + 1))
}

# run EXPECTED_EXIT ARGS...: runs the tool (60 s limit: a hang is a failure) with stdout/stderr in out.txt/err.txt.
run() {
  local expected=$1
  shift
  timeout 60 "$tool" "$@" >out.txt 2>err.txt
  local code=$?
  if [ "$code" -ne "$expected" ]; then
    fail "vtp-world $* exited $code, expected $expected; stderr: $(head -c 400 err.txt)"
    return 1
  fi
  return 0
}

# Exactly one line on stderr, starting with "vtp-world: ".
one_error_line() {
  local lines
  lines=$(wc -l <err.txt)
  if [ "$lines" -ne 1 ] || ! grep -q '^vtp-world: ' err.txt; then
    fail "$1: expected one 'vtp-world: ' line on stderr, got $lines: $(head -c 400 err.txt)"
  fi
}

# flip FILE OFFSET: inverts one byte in place.
flip() {
  local byte
  byte=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "$(printf '\\%03o' $((byte ^ 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

size_of() { wc -c <"$1" | tr -d ' '; }

# A small world with dense and uniform chunks, water and every default solid, at negative coordinates too.
make_world() {
  cat >make.txt <<'EOF'
# a hill, a pond and a few details
box fill min=-16,-8,-16 max=16,0,16 material=rock
sphere fill center=0,0,0 radius=7.5 material=dirt     # the hill
sphere paint center=0,4,0 radius=4 material=grass
cylinder fill center=9,2,-9 radius=3 height=4 material=water
cylinder clear center=-9,-2,9 radius=2.5 height=4
replace from=rock to=ore min=-4,-8,-4 max=4,-4,4
voxel set at=20,20,20 material=sand occupancy=200
voxel set at=-1,-1,-1 material=rock occupancy=0
EOF
  run 0 edit "$empty" world.vtw --script make.txt || exit 1
}

case $scenario in
  help)
    run 0 --help && grep -q 'Usage:' out.txt || fail "--help printed no usage"
    for sub in info check copy edit; do
      run 0 "$sub" --help && grep -q "vtp-world $sub" out.txt || fail "$sub --help printed no usage"
    done
    # A required flag with its own value label is still marked required.
    run 0 edit --help && grep -q -- '--script EDITS.txt REQUIRED' out.txt || fail "edit --help hides --script's label"
    run 0 export-obj --help && grep -q -- '--out OUT.obj REQUIRED' out.txt || fail "export-obj --help hides --out's"
    ;;

  usage)
    make_world
    run 2 && one_error_line "no subcommand"
    run 2 frobnicate world.vtw && one_error_line "unknown subcommand"
    grep -q "unknown subcommand 'frobnicate'" err.txt || fail "the unknown subcommand was not named: $(cat err.txt)"
    run 2 --bogus && grep -q "unknown option '--bogus'" err.txt || fail "the unknown flag was not named"
    run 2 info "" && one_error_line "an empty FILE"
    run 2 info --bogus && grep -q "unknown option '--bogus'" err.txt || fail "a subcommand's unknown flag was not named"
    # stdout that cannot be written is an error, not an exit 0 (a full disk).
    if [ -w /dev/full ]; then
      timeout 60 "$tool" check world.vtw >/dev/full 2>err.txt && fail "check with stdout on /dev/full exited 0"
      timeout 60 "$tool" check world.vtw --json - >/dev/full 2>err.txt && fail "check --json - on /dev/full exited 0"
    fi
    run 2 info && one_error_line "info without FILE"
    run 2 info world.vtw extra && one_error_line "info with an extra argument"
    run 2 info world.vtw --bogus && one_error_line "unknown flag"
    run 2 check && one_error_line "check without FILE"
    run 2 copy world.vtw && one_error_line "copy without OUT"
    run 2 edit world.vtw out.vtw && one_error_line "edit without --script"
    run 2 edit world.vtw out.vtw --script && one_error_line "--script without a value"
    [ -e out.vtw ] && fail "a usage error created OUT"
    # An empty value is refused, not replaced by the next argument (which once wrote the report over a world).
    cp world.vtw second.vtw
    run 2 info --json "" world.vtw second.vtw && one_error_line "--json with an empty value"
    run 2 info --json= world.vtw && one_error_line "--json= with nothing after it"
    cmp -s world.vtw second.vtw || fail "an empty --json value changed a world file"
    # No output may be an input or another output: each would be destroyed (export-obj once wrote its OBJ over FILE).
    printf 'box clear min=0,0,0 max=1,1,1\n' > script.txt
    cp script.txt script_copy.txt
    run 2 export-obj world.vtw --out world.vtw && one_error_line "export-obj --out FILE"
    run 2 export-obj world.vtw --out mesh.obj --png ./world.vtw && one_error_line "export-obj --png FILE"
    run 2 export-obj world.vtw --out mesh.obj --json mesh.obj && one_error_line "export-obj --json --out"
    run 2 info world.vtw --json "$PWD/world.vtw" && one_error_line "info --json FILE"
    run 2 check world.vtw --json world.vtw && one_error_line "check --json FILE"
    run 2 copy world.vtw copy.vtw --json copy.vtw && one_error_line "copy --json OUT"
    run 2 edit world.vtw script.txt --script script.txt && one_error_line "edit OUT --script"
    run 2 edit world.vtw out.vtw --script script.txt --json world.vtw && one_error_line "edit --json IN"
    cmp -s world.vtw second.vtw || fail "a refused output path changed the world"
    cmp -s script.txt script_copy.txt || fail "a refused output path changed the script"
    [ -e mesh.obj ] || [ -e copy.vtw ] || [ -e out.vtw ] && fail "a refused command wrote an output"
    ;;

  check_good)
    run 0 check "$empty" || true
    make_world
    run 0 check world.vtw && grep -q 'ok' out.txt || fail "check printed no OK line"
    [ -s err.txt ] && fail "check on a good file wrote to stderr"
    run 0 check world.vtw --salvage
    ;;

  check_corrupt)
    make_world
    size=$(size_of world.vtw)
    # One flipped byte anywhere — magic, header fields, material table, a record, the last CRC byte — is caught.
    for offset in 0 9 17 33 50 $((size / 2)) $((size - 5)) $((size - 1)); do
      cp world.vtw flipped.vtw
      flip flipped.vtw "$offset"
      run 1 check flipped.vtw && one_error_line "flipped byte at $offset"
    done
    # And at 64 seeded random offsets, and files cut at 16 seeded random lengths.
    RANDOM=1
    for _ in $(seq 64); do
      offset=$((RANDOM % size))
      cp world.vtw flipped.vtw
      flip flipped.vtw "$offset"
      run 1 check flipped.vtw && one_error_line "flipped byte at $offset"
    done
    for _ in $(seq 16); do
      length=$((RANDOM % size))
      head -c "$length" world.vtw >cut.vtw
      run 1 check cut.vtw && one_error_line "file cut to $length bytes"
    done
    head -c $((size - 1)) world.vtw >truncated.vtw
    run 1 check truncated.vtw && one_error_line "truncated file"
    { cat world.vtw; printf 'x'; } >longer.vtw
    run 1 check longer.vtw && one_error_line "trailing byte"
    : >empty_file.vtw
    run 1 check empty_file.vtw && one_error_line "empty file"
    head -c 4096 /dev/urandom >random.vtw
    run 1 check random.vtw && one_error_line "random bytes"
    run 1 check does_not_exist.vtw && one_error_line "missing file"
    mkdir a_directory
    run 1 check a_directory && one_error_line "directory"
    mkfifo a_fifo
    run 1 check a_fifo && one_error_line "fifo"
    ;;

  salvage)
    make_world
    size=$(size_of world.vtw)
    cp world.vtw damaged.vtw
    flip damaged.vtw $((size - 1))  # the last record's CRC: that chunk is bad, the rest is sound
    run 1 check damaged.vtw --salvage
    grep -q '^vtp-world: bad chunk ' err.txt || fail "check --salvage listed no bad chunk: $(cat err.txt)"
    run 0 copy --salvage damaged.vtw salvaged.vtw
    grep -q '^vtp-world: bad chunk ' err.txt || fail "copy --salvage listed no bad chunk"
    run 0 check salvaged.vtw
    run 1 copy damaged.vtw not_written.vtw && one_error_line "copy without --salvage"
    [ -e not_written.vtw ] && fail "copy of a damaged file created OUT"
    # 30 uniform chunks (19-byte records after the header), 25 of them with a bad CRC: stderr lists the first 20 and
    # a count, --json all 25.
    printf 'box fill min=0,0,0 max=48,8,40 material=rock\n' >blocks.txt
    run 0 edit "$empty" blocks.vtw --script blocks.txt || exit 1
    header=$(od -An -tu4 -j12 -N4 blocks.vtw | tr -d ' ')
    for i in $(seq 0 24); do flip blocks.vtw $((header + 19 * i + 18)); done
    run 1 check blocks.vtw --salvage --json bad.json
    [ "$(grep -c '^vtp-world: bad chunk ' err.txt)" -eq 20 ] || fail "salvage printed $(grep -c 'bad chunk ' err.txt) lines"
    grep -q 'and 5 more bad chunks' err.txt || fail "salvage did not count the chunks it did not print"
    [ "$(grep -o '"byte_offset"' bad.json | wc -l)" -eq 25 ] || fail "--json does not list the 25 bad chunks"
    ;;

  outputs_atomic)
    # An output that cannot be written whole (a file size limit standing for a full disk) leaves the old file as it
    # was and no temp file beside it: world saves, OBJ exports, JSON reports.
    make_world
    run 0 export-obj world.vtw --out mesh.obj --json report.json || exit 1
    run 0 copy world.vtw copy.vtw || exit 1
    cp mesh.obj mesh_before.obj
    cp report.json report_before.json
    cp copy.vtw copy_before.vtw
    # limited ARGS...: the tool with no file allowed to grow past 0 bytes (its stderr to err.txt through a pipe, which
    # the limit does not touch; its stdout dropped).
    limited() {
      (trap '' XFSZ; ulimit -f 0; timeout 60 "$tool" "$@" 2>&1 >/dev/null) | cat >err.txt
      return "${PIPESTATUS[0]}"
    }
    limited export-obj world.vtw --out mesh.obj && fail "export-obj under a zero file size limit exited 0"
    one_error_line "export-obj over the limit"
    limited check world.vtw --json report.json && fail "check --json under a zero file size limit exited 0"
    one_error_line "check --json over the limit"
    grep -q 'report.json' err.txt || fail "check --json over the limit did not name the report: $(cat err.txt)"
    limited copy world.vtw copy.vtw && fail "copy under a zero file size limit exited 0"
    one_error_line "copy over the limit"
    cmp -s mesh.obj mesh_before.obj || fail "a failed export-obj changed the old OBJ"
    cmp -s report.json report_before.json || fail "a failed --json changed the old report"
    cmp -s copy.vtw copy_before.vtw || fail "a failed copy changed the old world"
    ls | grep -q '\.tmp\.' && fail "a failed write left a temp file: $(ls)"
    # /dev/stdout redirected to a file is a stream: the report is appended to what the file held, not put in its place.
    echo "before" >all.json
    timeout 60 "$tool" check world.vtw --json /dev/stdout >>all.json 2>err.txt || fail "check --json /dev/stdout failed"
    [ "$(head -n 1 all.json)" = "before" ] || fail "--json /dev/stdout replaced the file stdout was redirected to"
    grep -q '"build"' all.json || fail "--json /dev/stdout wrote no report"
    ;;

  copy_identical)
    make_world
    run 0 copy world.vtw copy.vtw
    cmp -s world.vtw copy.vtw || fail "copy output differs from its input"
    run 0 copy "$empty" empty_copy.vtw
    cmp -s "$empty" empty_copy.vtw || fail "copy of the empty fixture differs from it"
    ;;

  edit)
    make_world
    # Same input and script, same bytes.
    run 0 edit "$empty" again.vtw --script=make.txt
    cmp -s world.vtw again.vtw || fail "the same script gave different files"
    run 0 check world.vtw
    run 0 info world.vtw --json info.json
    grep -q '"stored": [1-9]' info.json || fail "info reports no stored chunks"
    grep -q '"water": [1-9]' info.json || fail "info reports no water voxels"
    grep -q '"ore": [1-9]' info.json || fail "info reports no ore voxels"
    grep -q '"cpu":' info.json || fail "info JSON has no machine.cpu"
    grep -q '"compiler":' info.json || fail "info JSON has no build.compiler"
    grep -q '"flags":' info.json || fail "info JSON has no build.flags"
    run 0 info world.vtw --json=-
    grep -q '"file_bytes": '"$(size_of world.vtw)" out.txt || fail "info --json=- has the wrong file_bytes"
    # An edit script that changes nothing still writes OUT, identical to IN.
    printf '# nothing\n\n' >nothing.txt
    run 0 edit world.vtw unchanged.vtw --script nothing.txt
    cmp -s world.vtw unchanged.vtw || fail "an empty script changed the world"
    # A value that begins with '-' is still the flag's value.
    printf 'sphere clear center=0,0,0 radius=3\n' >-dash.txt
    run 0 edit world.vtw dug.vtw --script -dash.txt
    cmp -s world.vtw dug.vtw && fail "a clear changed nothing"
    # The script may come from stdin.
    timeout 60 "$tool" edit world.vtw piped.vtw --script - <-dash.txt >/dev/null 2>err.txt || fail "--script - failed"
    cmp -s dug.vtw piped.vtw || fail "the script from stdin gave a different world"
    ;;

  edit_rejects)
    make_world
    # A parse error names its line; nothing is written.
    printf '# header\nbox fill min=0,0,0 max=1,1,1 material=rock\nsphere fill center=0,0,0 radius=2 material=granite\n' >bad_material.txt
    run 1 edit world.vtw out1.vtw --script bad_material.txt && one_error_line "bad material"
    grep -q "^vtp-world: 3: unknown material 'granite'" err.txt || fail "bad material: wrong message $(cat err.txt)"
    [ -e out1.vtw ] && fail "a bad script line created OUT"
    printf 'box fill min=0,0,0 max=1,1,1 material=rock\nsphere fill center=0,0,0 radius=nan material=rock\n' >nan.txt
    run 1 edit world.vtw out2.vtw --script nan.txt && one_error_line "nan"
    grep -q '^vtp-world: 2: ' err.txt || fail "nan: no line number: $(cat err.txt)"
    [ -e out2.vtw ] && fail "a nan radius created OUT"
    printf 'sphere clear center=0,0,0 radius=2 material=rock\n' >clear_material.txt
    run 1 edit world.vtw out3.vtw --script clear_material.txt && one_error_line "material on clear"
    grep -q '^vtp-world: 1: sphere clear takes no material' err.txt || fail "material on clear: $(cat err.txt)"
    # An edit that parses but that the world rejects (over the radius cap) names its line too.
    printf 'box fill min=0,0,0 max=1,1,1 material=rock\n\n\nsphere fill center=0,0,0 radius=65 material=rock\n' >cap.txt
    run 1 edit world.vtw out4.vtw --script cap.txt && one_error_line "radius cap"
    grep -q '^vtp-world: 4: ' err.txt || fail "radius cap: no line number: $(cat err.txt)"
    [ -e out4.vtw ] && fail "a rejected edit created OUT"
    # An existing OUT is left as it was.
    cp world.vtw keep.vtw
    run 1 edit "$empty" keep.vtw --script cap.txt
    cmp -s world.vtw keep.vtw || fail "a rejected script changed an existing OUT"
    # A missing script or input world is invalid data, not a usage error.
    run 1 edit world.vtw out5.vtw --script no_such_script.txt && one_error_line "missing script"
    run 1 edit no_such_world.vtw out6.vtw --script cap.txt && one_error_line "missing world"
    # A directory is not an empty script (nor an empty rays file).
    mkdir -p a_directory
    run 1 edit world.vtw out7.vtw --script a_directory && one_error_line "a directory as the script"
    [ -e out7.vtw ] && fail "a directory as the script created OUT"
    run 1 raycast world.vtw --rays a_directory && one_error_line "a directory as the rays file"
    # A script without end is refused at 64 MiB, not read until memory runs out.
    run 1 edit world.vtw out10.vtw --script /dev/zero && one_error_line "an endless script"
    grep -q 'larger than 64 MiB' err.txt || fail "an endless script: $(cat err.txt)"
    [ -e out10.vtw ] && fail "an endless script created OUT"
    # A report that cannot be written fails before the world is: exit 1 and no OUT (it once wrote OUT, then failed).
    printf 'box clear min=0,0,0 max=1,1,1\n' >good.txt
    run 1 edit world.vtw out8.vtw --script good.txt --json no_such_dir/report.json && one_error_line "unwritable --json"
    [ -e out8.vtw ] && fail "an unwritable --json still let edit write OUT"
    run 1 export-obj world.vtw --out mesh.obj --png no_such_dir/view.png && one_error_line "unwritable --png"
    [ -e mesh.obj ] && fail "an unwritable --png still let export-obj write --out"
    run 1 copy world.vtw out9.vtw --json a_directory && one_error_line "a directory as --json"
    [ -e out9.vtw ] && fail "a directory as --json still let copy write OUT"
    ;;

  raycast)
    # A flat floor: rock below y = 0 over x, z in -16..16, nothing else.
    printf 'box fill min=-16,-8,-16 max=16,0,16 material=rock\n' >floor.txt
    run 0 edit "$empty" floor.vtw --script floor.txt || exit 1
    printf '# down through the floor, off to the side, along it\n0.25 10 0.5 0.25 -10 0.5\n\n40 10 40 40 -10 40\n1 2 3\n' >rays.txt
    run 1 raycast floor.vtw --rays rays.txt
    [ "$(wc -l <out.txt)" -eq 3 ] || fail "raycast printed $(wc -l <out.txt) lines for 3 rays"
    line1=$(sed -n 1p out.txt)
    # Down from y = 10 to -10 meets the top at y = 0: half way, entering the solid, rock.
    grep -q '^{"ray":0,"hits":\[{"t":0.5,"point":\[0.25,0.0,0.5\]' <<<"$line1" || fail "first ray: $line1"
    grep -q '"material":"rock","material_id":2' <<<"$line1" || fail "first ray material: $line1"
    grep -q '"front_face":true' <<<"$line1" || fail "first ray front_face: $line1"
    grep -q '^{"ray":1,"hits":\[\]}$' <(sed -n 2p out.txt) || fail "a ray beside the floor hit: $(sed -n 2p out.txt)"
    grep -q '^{"ray":2,"error":' <(sed -n 3p out.txt) || fail "a bad line gave no error: $(sed -n 3p out.txt)"
    # --all: the top and the underside, in increasing t; stdin works too.
    printf '0.25 10 0.5 0.25 -10 0.5\n' | timeout 60 "$tool" raycast floor.vtw --rays - --all >all.txt 2>err.txt ||
      fail "raycast --all from stdin failed"
    [ "$(grep -o '"t":' all.txt | wc -l)" -eq 2 ] || fail "--all: expected 2 hits: $(cat all.txt)"
    grep -q '"front_face":true.*"front_face":false' all.txt || fail "--all: enter then leave: $(cat all.txt)"
    # A FIFO named by path streams too: the first ray is answered while its writer still holds the pipe open.
    mkfifo rays.fifo
    { printf '0.25 10 0.5 0.25 -10 0.5\n'; exec sleep 30; } >rays.fifo &
    writer=$!
    timeout 60 "$tool" raycast floor.vtw --rays rays.fifo >fifo.txt 2>err.txt &
    for _ in $(seq 100); do [ -s fifo.txt ] && break; sleep 0.1; done
    grep -q '^{"ray":0,"hits":\[{' fifo.txt || fail "a ray from a FIFO was not answered before the pipe closed"
    kill "$writer" 2>/dev/null
    wait
    run 1 raycast floor.vtw --rays missing.txt
    one_error_line "missing ray file"
    # --json PATH: the same lines into a file, nothing on stdout.
    run 1 raycast floor.vtw --rays rays.txt && cp out.txt stdout_lines.txt
    run 1 raycast floor.vtw --rays rays.txt --json lines.json
    [ -s out.txt ] && fail "raycast --json PATH also printed to stdout"
    cmp -s lines.json stdout_lines.txt || fail "raycast --json PATH wrote other lines than stdout gets"
    ;;
  raycast_water)
    # Rock below y = 0 and water from 0 to 4 over x, z in -16..16.
    printf 'box fill min=-16,-8,-16 max=16,0,16 material=rock\nbox fill min=-16,0,-16 max=16,4,16 material=water\n' \
      >lake.txt
    run 0 edit "$empty" lake.vtw --script lake.txt || exit 1
    printf '0.25 10 0.5 0.25 -10 0.5\n0.25 2 0.5 0.25 -2 0.5\n40 10 40 40 -10 40\n' >rays.txt
    run 0 raycast lake.vtw --rays rays.txt --water || exit 1
    [ "$(wc -l <out.txt)" -eq 3 ] || fail "raycast --water printed $(wc -l <out.txt) lines for 3 rays"
    line1=$(sed -n 1p out.txt)
    # Down from y = 10: the water at y = 4 (t = 0.3), then the rock at y = 0 (t = 0.5), in that order.
    grep -q '^{"ray":0,"hits":\[{"t":0.3[0-9]*,"point":\[0.25,4.0[0-9]*,0.5\],"normal":\[0.0,1.0,0.0\],"material":"water","material_id":1,"chunk":\[0,0,0\],"water":true,"front_face":true},{"t":0.5,' \
      <<<"$line1" || fail "first ray: $line1"
    grep -q '"material":"rock","material_id":2,"chunk":\[[-0-9,]*\],"water":false' <<<"$line1" ||
      fail "first ray, rock hit: $line1"
    # Starting in the water: a water hit at t = 0 before the rock.
    grep -q '^{"ray":1,"hits":\[{"t":0.0,.*"water":true.*"water":false' <(sed -n 2p out.txt) ||
      fail "a ray starting in water: $(sed -n 2p out.txt)"
    grep -q '^{"ray":2,"hits":\[\]}$' <(sed -n 3p out.txt) || fail "a ray beside the lake hit: $(sed -n 3p out.txt)"
    # Without --water, no water hit; with --all too, the water hit sits among the surface hits in t order.
    run 0 raycast lake.vtw --rays rays.txt || exit 1
    grep -q '"water":true' out.txt && fail "water hits without --water: $(cat out.txt)"
    run 0 raycast lake.vtw --rays rays.txt --all --water || exit 1
    grep -q '^{"ray":0,"hits":\[{"t":0.3[0-9]*,[^}]*"water":true[^}]*},{"t":0.5,[^}]*"front_face":true},{"t":0.9' \
      <(sed -n 1p out.txt) || fail "--all --water: $(sed -n 1p out.txt)"
    ;;
  readme_example)
    # The first code block of tools/README.md "Edit scripts" is a script that applies cleanly to an empty world.
    awk '/<!-- edit-script -->/ { section = 1 } section && /^```/ { if (inside) exit; inside = 1; next } inside' \
      "$readme" >example.txt
    [ -s example.txt ] || fail "no example script found in $readme"
    run 0 edit "$empty" example.vtw --script example.txt
    grep -q 'applied 9 edit' out.txt || fail "the tools/README.md example is not 9 edits: $(cat out.txt)"
    ;;

  *)
    fail "unknown scenario"
    ;;
esac

exit $((failures > 0))
