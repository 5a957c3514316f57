#!/usr/bin/env bash
# The web UI's figures (issue 17), side by side with a static-file baseline in one run: bench/gui/page_bench.mjs.
# Needs Debian's chromium, node and playwright-core (the build tree's copy, installed by the test
# agent_gui_deps_install: `ctest -R agent_gui_deps_install` first).
#
#   bench/gui/run.sh [ROUNDS] [BUILD_DIR]
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
rounds="${1:-30}"
build="${2:-$top/build}"
playwright="$build/tests/agent/gui-deps/node_modules/playwright-core"
if [ ! -d "$playwright" ]; then
  (cd "$build" && ctest -R agent_gui_deps_install >/dev/null)
fi
exec node "$top/bench/gui/page_bench.mjs" "$build/tools/interpreter/interpreter" "$top/tests/agent/scripted_server.py" \
  "$playwright" "$rounds"
