#!/usr/bin/env bash
# Renders vtp-profile's HTML report in headless Debian chromium and checks the summary is shown (label `html`).
# Usage: check_profile_html.sh REPORT.html. Exit 77 (skipped) when chromium is not installed.
set -euo pipefail
report=$1
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
  echo "chromium not installed: skipping the HTML render check (apt-get install chromium)"
  exit 77
fi
dom=$("$browser" --headless=new --no-sandbox --disable-gpu --dump-dom "file://$(realpath "$report")" 2>/dev/null)
for text in '<table id="summary">' 'collider bytes per triangle' 'short ray vs Bullet' '<svg'; do
  if ! grep -qF "$text" <<<"$dom"; then
    echo "rendered report lacks: $text"
    exit 1
  fi
done
echo "rendered: summary table and charts present"
