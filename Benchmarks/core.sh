#!/usr/bin/env bash
# Times the pure core in release mode: 10,000-host config load and URL matching throughput.
# Usage: Benchmarks/core.sh   (pins to one CPU when taskset is available, to reduce noise on 2-core machines)
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product CoreBench >/dev/null
binary="$(swift build -c release --show-bin-path)/CoreBench"
if command -v taskset >/dev/null; then exec taskset -c 1 "$binary"; else exec "$binary"; fi
