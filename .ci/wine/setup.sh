#!/usr/bin/env bash
# Prepares a Wine prefix that runs Go (>= 1.24) windows/amd64 binaries on Linux: installs
# Debian's wine64 and mingw-w64 if missing, and builds a small bcryptprimitives.dll (ProcessPrng
# on top of RtlGenRandom) into the prefix's system32: Debian's Wine 8 lacks that DLL and the Go
# runtime refuses to start without it. (A copy of ../shared/tools/wine/setup.sh, so the repository
# does not depend on it.)
#   usage:  source .ci/wine/setup.sh      (sets WINEPREFIX, WINEDEBUG, WINE)
# Wine is not Windows: see docs/platforms.md for what its runs cannot show.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if ! [ -x /usr/lib/wine/wine64 ] || ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wine64 gcc-mingw-w64-x86-64 >/dev/null
fi
export WINEPREFIX=${WINEPREFIX:-/tmp/wineprefix} WINEDEBUG=-all WINE=/usr/lib/wine/wine64
sys32="$WINEPREFIX/drive_c/windows/system32"
[ -d "$sys32" ] || "$WINE" cmd /c exit >/dev/null 2>&1 || true
[ -f "$sys32/bcryptprimitives.dll" ] ||
  x86_64-w64-mingw32-gcc -shared -O2 -o "$sys32/bcryptprimitives.dll" "$here/bcryptprimitives.c" -ladvapi32
echo "wine ready: WINE=$WINE WINEPREFIX=$WINEPREFIX"
