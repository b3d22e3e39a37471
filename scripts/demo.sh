#!/usr/bin/env bash
# demo.sh is the main job on the embedded default instance (run by `make demo`).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=bin/memsched
$bin version
