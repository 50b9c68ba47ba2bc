#!/usr/bin/env bash
# Installs Mesa 25's lavapipe (a software Vulkan driver) from Debian bookworm-backports, so
# gpu-heap runs on a machine without a GPU driver. Needs root. Debian bookworm's own Mesa 22
# must not be used: its lavapipe silently ends every loop after 65,535 iterations.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
    echo "run as root (sudo $0)" >&2
    exit 1
fi
. /etc/os-release
case "${VERSION_CODENAME:-}" in
    bookworm)
        echo 'deb http://deb.debian.org/debian bookworm-backports main' \
            > /etc/apt/sources.list.d/backports.list
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q -t bookworm-backports mesa-vulkan-drivers
        ;;
    *)
        # Newer Debian and Ubuntu releases ship Mesa 24 or later directly.
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q mesa-vulkan-drivers
        ;;
esac
DEBIAN_FRONTEND=noninteractive apt-get install -y -q libvulkan1
