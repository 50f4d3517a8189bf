#!/usr/bin/env bash
# Installs every build dependency from Debian 12 packages, only what is missing (idempotent). Called by both Quick-start
# commands and by .ci/run. Set VTP_WITH_FUZZ=1 to add clang's libFuzzer runtime too, VTP_WITH_BROWSER=1 to add
# chromium (the `html` test renders vtp-profile's report in it; without it that test is skipped).
set -euo pipefail

packages=(g++ cmake make pkg-config zlib1g-dev libbullet-dev doctest-dev libcli11-dev nlohmann-json3-dev python3)
if [[ "${VTP_WITH_FUZZ:-0}" == 1 ]]; then packages+=(clang libclang-rt-14-dev); fi
if [[ "${VTP_WITH_BROWSER:-0}" == 1 ]]; then packages+=(chromium); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then exit 0; fi

sudo=""
if [[ $(id -u) != 0 ]]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
