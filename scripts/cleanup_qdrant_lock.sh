#!/usr/bin/env bash
# Remove a stale lock of a local Qdrant memory store, only when no process holds it.
#
#   scripts/cleanup_qdrant_lock.sh [STORE_DIR]      (default: ${MASSGEN_HOME:-.massgen}/qdrant)
#
# Local Qdrant holds an exclusive flock on STORE_DIR/.lock while a client has the store open. If a
# process died without releasing it cleanly, the file stays; the lock itself dies with the process.
# This script takes the lock without waiting: if that fails, a live process still uses the store and
# nothing is removed (exit 1). Otherwise the stale file is removed (exit 0).
set -euo pipefail

store="${1:-${MASSGEN_HOME:-.massgen}/qdrant}"
lock="$store/.lock"

if [[ ! -e "$lock" ]]; then
    echo "no lock file at $lock: nothing to clean"
    exit 0
fi
if ! command -v flock >/dev/null 2>&1; then
    echo "error: 'flock' (util-linux) is needed to check the lock safely; not removing $lock" >&2
    exit 2
fi
if ! flock --nonblock "$lock" rm -f "$lock"; then
    holders="$( (command -v fuser >/dev/null 2>&1 && fuser "$lock" 2>/dev/null) || true)"
    echo "refusing: a process still holds $lock${holders:+ (PID$holders)}; stop it first" >&2
    exit 1
fi
echo "removed stale lock $lock"
