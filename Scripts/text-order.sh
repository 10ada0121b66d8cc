#!/bin/sh
# Writes Scripts/keygate.text-order: the text sections of every function of the executable that
# a plain `keygate get` runs (callgrind's list of executed functions), one per line, for gold's
# --section-ordering-file (the Makefile's RELEASE_FLAGS). The linker puts them first, together,
# so a get's code sits in about 0.8 MB side by side instead of in 100 places of a 13 MB text:
# the kernel maps 64 KiB around each page fault, so a get takes about 15 text faults, not 100.
# Run it on a release build after changes to the get path, then rebuild:
#
#   Scripts/text-order.sh .build/release/keygate
set -eu
[ $# -eq 1 ] || { echo "usage: $0 KEYGATE" >&2; exit 2; }
binary=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
env="HOME=$work XDG_DATA_HOME=$work/data PATH=/usr/bin:/bin"
printf s3cret | env -i $env "$binary" add -s api -a me
env -i $env "$binary" get -s api -a me >/dev/null
env -i $env valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/out" \
  "$binary" get -s api -a me >/dev/null 2>"$work/log"
sed -n 's/^c\{0,1\}fn=([0-9]*) //p' "$work/out" | LC_ALL=C sort -u >"$work/touched"
nm --defined-only "$binary" | awk '$2 ~ /^[Tt]$/ {print $3}' | LC_ALL=C sort -u >"$work/text"
LC_ALL=C comm -12 "$work/touched" "$work/text" | sed 's/^/.text./' >"$(dirname "$0")/keygate.text-order"
wc -l "$(dirname "$0")/keygate.text-order"
