#!/bin/sh
# Writes Scripts/keygate.symbol-order: every function a plain `keygate get` runs and every
# variable it touches, in the order of first use, one symbol per line, for lld's
# --symbol-ordering-file (the Makefile's RELEASE_FLAGS). The linker lays the sections holding them
# out together at the start of .text, .rodata, .data and .bss, so a get's code and data sit in a
# few hundred KiB side by side instead of in pages spread over 13 MB. Each first touch of a page
# is a page fault (the kernel maps 64 KiB of a file around each one; a variable's page in .bss
# faults twice, once to read and once to write), and faults are most of what a get costs beyond
# the hello world's start-up (Benchmarks/RESULTS.md, session 24).
#
# The trace is valgrind's lackey (every instruction and data address of one get), read against
# the executable's symbol table. Run it on a release build after changes to the get path, then
# relink (SwiftPM does not know the file: remove the executable first):
#
#   Scripts/symbol-order.sh .build/release/keygate
#   rm .build/release/keygate && make release
#
# Needs valgrind, python3 and binutils (strip, nm, readelf), and a release build: not position
# independent (the Makefile links with -no-pie), so the trace's addresses are the symbol table's.
# The traced get runs outside a login session: the lock-state question over D-Bus is not in the
# order. Names defined more than once (local symbols of the same name in several objects) are
# left out: the linker would move every section that has one. The file is replaced only by a
# complete list (one that names keygate_main); a failed run leaves it as it was.
set -eu
[ $# -eq 1 ] || { echo "usage: $0 KEYGATE" >&2; exit 2; }
binary=$1
readelf -h "$binary" | grep -q 'Type: *EXEC' || {
  echo "$0: $binary is position independent; trace the release build (make release)" >&2
  exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
env="HOME=$work XDG_DATA_HOME=$work/data PATH=/usr/bin:/bin"
printf s3cret | env -i $env "$binary" add -s api -a me
env -i $env "$binary" get -s api -a me >/dev/null
# valgrind 3.19 cannot read DWARF 5; the symbol table is all the trace needs.
strip --strip-debug -o "$work/keygate" "$binary"
env -i $env valgrind --tool=lackey --trace-mem=yes --log-file="$work/trace" \
  "$work/keygate" get -s api -a me >/dev/null
nm -n -S --defined-only "$work/keygate" >"$work/symbols"
python3 - "$work/symbols" "$work/trace" >"$work/order" <<'PY'
import bisect, collections, sys

symbols_path, trace_path = sys.argv[1], sys.argv[2]
code, data, seen_names = [], [], collections.Counter()
for line in open(symbols_path):
    fields = line.split()
    if len(fields) != 4:
        continue
    start, size, kind, name = int(fields[0], 16), int(fields[1], 16), fields[2], fields[3]
    seen_names[name] += 1
    if kind in "tTwW":
        code.append((start, size, name))
    elif kind in "bBdDrRvV":
        data.append((start, size, name))

def finder(table):
    table.sort()
    starts = [entry[0] for entry in table]
    def find(address):
        index = bisect.bisect_right(starts, address) - 1
        if index >= 0:
            start, size, name = table[index]
            if start <= address < start + max(size, 1):
                return name
        return None
    return find

find_code, find_data = finder(code), finder(data)
functions, variables = {}, {}
for line in open(trace_path):
    # lackey: "I  address,size" for an instruction, " L|S|M address,size" for data.
    instruction = line.startswith("I  ")
    if not instruction and not (line[0] == " " and line[1:2] in ("L", "S", "M")):
        continue
    address = int(line[3:].split(",", 1)[0], 16)
    if instruction:
        name = find_code(address)
        if name is not None and name not in functions:
            functions[name] = True
    else:
        name = find_data(address)
        if name is not None and name not in variables:
            variables[name] = True
for name in list(functions) + list(variables):
    if seen_names[name] == 1:
        print(name)
PY
grep -qx keygate_main "$work/order" || { echo "$0: the trace never reached keygate_main; nothing written" >&2; exit 1; }
mv "$work/order" "$(dirname "$0")/keygate.symbol-order"
wc -l "$(dirname "$0")/keygate.symbol-order"
