#!/usr/bin/env bash
# Installs Mesa 25's lavapipe (a software Vulkan driver) from Debian bookworm-backports, so
# gpu-heap runs on a machine without a GPU driver. Needs root. Debian bookworm's own Mesa 22
# must not be used: its lavapipe silently ends every loop after 65,535 iterations.
# The backports line reuses the Debian mirror this machine's apt sources already name.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
    echo "run as root (sudo $0)" >&2
    exit 1
fi

# The first Debian archive URI of the machine's apt sources (deb822 or one-line format).
debian_mirror() {
    local uri
    uri=$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' |
        grep -v -e security -e updates | head -n1 || true)
    if [ -z "$uri" ]; then
        uri=$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
            awk '{print $2}' | grep -v security | head -n1 || true)
    fi
    printf '%s' "$uri"
}

. /etc/os-release
case "${VERSION_CODENAME:-}" in
    bookworm)
        mirror=$(debian_mirror)
        if [ -z "$mirror" ]; then
            echo "no Debian mirror found in /etc/apt/sources*: add bookworm-backports by hand" >&2
            exit 1
        fi
        # Only if no source names bookworm-backports yet; never over a file of the owner's.
        if ! grep -qrs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
            echo "deb $mirror bookworm-backports main" > /etc/apt/sources.list.d/gpu-heap-backports.list
        fi
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
