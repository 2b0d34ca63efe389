#!/usr/bin/env bash
# without_cache_sysfs.sh CMD...: runs CMD in a private mount namespace where every
# /sys/devices/system/cpu/cpu*/cache directory is an empty directory, as on the many VMs and
# containers whose kernel exposes no cache directories. Needs root (CI runs as root).
set -euo pipefail
if [[ $# -eq 0 ]]; then echo "usage: without_cache_sysfs.sh CMD..." >&2; exit 2; fi
if [[ $(id -u) -ne 0 ]]; then echo "without_cache_sysfs.sh: needs root (unshare -m and mount --bind)" >&2; exit 2; fi
empty=$(mktemp -d)
trap 'rmdir "$empty"' EXIT
unshare -m bash -c '
  set -e
  mount --make-rprivate /
  for d in /sys/devices/system/cpu/cpu*/cache; do [[ -d $d ]] && mount --bind "$1" "$d"; done
  if compgen -G "/sys/devices/system/cpu/cpu*/cache/index*" >/dev/null; then
    echo "without_cache_sysfs.sh: the cache directories are still visible" >&2; exit 2
  fi
  shift
  exec "$@"' _ "$empty" "$@"
