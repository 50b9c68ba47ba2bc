#!/usr/bin/env bash
# Installs Node.js and npm from the distribution's own packages, for gpu-heap's web tests
# (web/, cli/tests/web.rs: the JS host module on Dawn). Needs root. The apt sources are the
# machine's own; nothing is added.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
    echo "run as root (sudo $0)" >&2
    exit 1
fi
apt-get update -q
DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm
