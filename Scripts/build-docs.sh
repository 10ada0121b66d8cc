#!/usr/bin/env bash
# `make docs`: builds the documentation site with the toolchain's docc.
#
#  1. symbol graphs of every library product (`swift package dump-symbol-graph`, which builds
#     in debug first);
#  2. one catalog from every module's `Sources/<Module>/<Module>.docc` (a file name used by two
#     catalogs is an error), so links between modules resolve;
#  3. `docc convert` into one static site, .build/docs/Keygate.doccarchive; any warning fails;
#  4. every ```swift block of the catalogs' articles is type-checked, each block on its own,
#     against the modules just built, so the samples cannot rot;
#  5. every block that is a test (`@Test`) must be found word for word in a file under Tests/,
#     so `make test` runs it.
#
# Environment: SWIFT (default swift), DOCC and SWIFTC (default: those beside swift),
# DOCS_HOSTING_BASE_PATH (default none: the site is served from the root of its host).
set -euo pipefail
shopt -s nullglob
cd "$(dirname "$0")/.."

swift=${SWIFT:-swift}
toolchain_bin=$(dirname "$(readlink -f "$(command -v "$swift")")")
docc=${DOCC:-$toolchain_bin/docc}
swiftc=${SWIFTC:-$toolchain_bin/swiftc}
out=.build/docs
catalog=$out/Keygate.docc
archive=$out/Keygate.doccarchive
work=$out/work

for tool in "$docc" "$swiftc"; do
    if [ ! -x "$tool" ]; then
        echo "make docs: $tool not found: set DOCC and SWIFTC to the toolchain's docc and swiftc" >&2
        exit 1
    fi
done

rm -rf "$out"
mkdir -p "$catalog" "$work/snippets"

# 1. Symbol graphs of the library products named in Package.swift. SwiftPM also tries the
# test modules and fails on those, so its exit status is not used: each library's graph must
# be there instead, written afresh into a clean directory.
bin_path=$("$swift" build --show-bin-path)
graphs=$(dirname "$bin_path")/symbolgraph
libraries=$(sed -n 's/.*\.library(name: "\([^"]*\)".*/\1/p' Package.swift)
rm -rf "$graphs"
mkdir -p "$work/symbol-graphs"
"$swift" package dump-symbol-graph --skip-synthesized-members >"$work/dump.log" 2>&1 || true
for library in $libraries; do
    if [ ! -s "$graphs/$library.symbols.json" ]; then
        cat "$work/dump.log" >&2
        echo "make docs: no symbol graph for the library $library (see above)" >&2
        exit 1
    fi
    # The module's own graph, and those of its extensions to other modules' types.
    cp "$graphs/$library".symbols.json "$graphs/$library"@*.symbols.json "$work/symbol-graphs/"
done

# 2. One catalog; remember where each file came from, to name it in diagnostics.
: >"$work/origins.sed"
for source in Sources/*/*.docc; do
    while IFS= read -r -d '' file; do
        relative=${file#"$source"/}
        if [ -e "$catalog/$relative" ]; then
            echo "make docs: $file: another catalog already has a file named $relative" >&2
            exit 1
        fi
        mkdir -p "$(dirname "$catalog/$relative")"
        cp "$file" "$catalog/$relative"
        printf 's|%s|%s|g\ns|--> %s:|--> %s:|\n' "$catalog/$relative" "$file" "$relative" "$file" \
            >>"$work/origins.sed"
    done < <(find "$source" -type f -print0)
done

# 3. The site.
hosting=()
if [ -n "${DOCS_HOSTING_BASE_PATH:-}" ]; then hosting=(--hosting-base-path "$DOCS_HOSTING_BASE_PATH"); fi
status=0
"$docc" convert "$catalog" --additional-symbol-graph-dir "$work/symbol-graphs" --output-path "$archive" \
    --fallback-display-name Keygate --fallback-bundle-identifier org.keygate.Keygate \
    --transform-for-static-hosting "${hosting[@]}" --warnings-as-errors >"$work/docc.log" 2>&1 || status=$?
sed -f "$work/origins.sed" "$work/docc.log" >"$work/docc-named.log"
if [ "$status" -ne 0 ] || grep -Eq '(^|[^a-z])(warning|error):' "$work/docc-named.log"; then
    cat "$work/docc-named.log" >&2
    echo "make docs: docc reported the problems above (exit $status); the site is not usable" >&2
    exit 1
fi

# 4. The articles' Swift samples: each block is a whole program (or a whole Package.swift,
# when it starts with `// swift-tools-version:`), type-checked with diagnostics pointing at
# the article's own lines.
count=0
while IFS= read -r article; do
    name=$(printf '%s' "${article%.md}" | tr '/' '_')
    awk -v dir="$work/snippets" -v name="$name" -v article="$article" '
        /^```swift[ \t]*$/ { n++; path = sprintf("%s/%s-%d", dir, name, n); file = path "/main.swift"; inside = 1
                             system("mkdir -p " path)
                             printf "#sourceLocation(file: \"%s\", line: %d)\n", article, NR + 1 > file; next }
        /^```[ \t]*$/ && inside { inside = 0; close(file); next }
        inside { print > file }
    ' "$article"
done < <(find Sources -path '*.docc/*' -name '*.md' | sort)
includes=()
for module_map in Sources/*/module.modulemap Sources/*/include/module.modulemap; do includes+=(-I "$(dirname "$module_map")"); done
manifest_api=$(dirname "$toolchain_bin")/lib/swift/pm/ManifestAPI
failed=0
while IFS= read -r snippet; do
    count=$((count + 1))
    tools=$(sed -n '2s|^// swift-tools-version: *\([0-9.]*\).*|\1|p' "$snippet")
    if [ -n "$tools" ]; then
        flags=(-package-description-version "$tools" -I "$manifest_api")
    else
        flags=(-I "$bin_path/Modules" "${includes[@]}")
    fi
    if ! "$swiftc" -typecheck -swift-version 6 -warnings-as-errors -module-name DocSample "${flags[@]}" "$snippet" >"$snippet.log" 2>&1; then
        cat "$snippet.log" >&2
        failed=1
    fi
done < <(find "$work/snippets" -name main.swift | sort)
if [ "$failed" -ne 0 ]; then
    echo "make docs: a Swift sample in an article does not compile (see above)" >&2
    exit 1
fi

# 5. A sample that is a test (`@Test`) must also pass: it must appear word for word, without
# its imports, in a test file under Tests/, where `make test` runs it.
tests_text=$(find Tests -name '*.swift' -exec cat {} + | tr '\n' '\001')
while IFS= read -r snippet; do
    grep -q '@Test' "$snippet" || continue
    needle=$(sed '1d' "$snippet" | grep -v '^import ' | sed '/./,$!d')
    needle=${needle//$'\n'/$'\001'}
    if [[ "$tests_text" != *"$needle"* ]]; then
        echo "make docs: the test sample at $(sed -n '1s/^#sourceLocation(file: "\(.*\)", line: \([0-9]*\))/\1:\2/p' "$snippet")" \
            "is not in any file under Tests/ word for word (copy it there, formatted by swift format)" >&2
        failed=1
    fi
done < <(find "$work/snippets" -name main.swift | sort)
if [ "$failed" -ne 0 ]; then exit 1; fi

echo "make docs: $archive (open documentation/keygate/; $count article samples type-checked)"
