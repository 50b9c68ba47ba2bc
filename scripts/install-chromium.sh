#!/usr/bin/env bash
# Installs Debian's Chromium, for gpu-heap's demo page test (web/test/demo.test.js, run by
# cli/tests/web.rs): headless, its WebGPU runs on the software adapter it brings. Debian
# only (Ubuntu's chromium package is a snap, which containers lack). Needs root. The apt
# sources are the machine's own; nothing is added.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
    echo "run as root (sudo $0)" >&2
    exit 1
fi
apt-get update -q
DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
