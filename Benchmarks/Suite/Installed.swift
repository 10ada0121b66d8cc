// Every executable a whole-process row runs (keygate, keygated, the hello world) is measured as
// `make install` places it: a copy written by install(1), not the linker's output file.
//
// The linker writes its output through a shared memory map, so most of that file's page cache is
// made of single 4 KiB pages (4,248 of the 7,869 pages of a release `keygate`, read from
// /proc/kpageflags). A file written with write(2) (install, cp, a package manager), or read
// back from the disk, sits in large folios (1 to 208 single pages of 7,869). The kernel maps a
// large folio around a page fault with less work than sixteen single pages, so the same bytes
// start slower from the linker's output: a `keygate get` 0.25-0.45 ms slower on the 2-core VM of
// Benchmarks/RESULTS.md (session 23). A user runs the installed file. The copies go in the bench's
// cache directory (.build/bench-cache unless KEYGATE_BENCH_CACHE says otherwise), beside the
// build, not in /tmp, which is a tmpfs on many systems and keeps its files in another layout.

import Foundation
import Glibc

/// The directories the installed copies live in, removed by ``removeInstalledCopies()``.
nonisolated(unsafe) private var installDirectories: [String] = []

/// `binary` copied by `install -m 0755` into a private directory, with `keygated` beside it
/// when there is one beside `binary`, so the broker rows find the daemon as before. A path that
/// is already such a copy is returned as it is. When a copy fails, standard error says so and
/// the file is measured in place.
func installedCopy(of binary: String) -> String {
    if installDirectories.contains(where: { binary.hasPrefix($0 + "/") }) { return binary }
    let source = URL(fileURLWithPath: binary)
    let directory = temporaryDirectory("installed", in: cacheRoot)
    installDirectories.append(directory)
    let copy = directory + "/" + source.lastPathComponent
    guard install(binary, as: copy) else { return binary }
    let daemon = source.deletingLastPathComponent().appendingPathComponent("keygated").path
    if source.lastPathComponent != "keygated", access(daemon, X_OK) == 0 {
        _ = install(daemon, as: directory + "/keygated")
    }
    return copy
}

/// `install -m 0755 source copy`; false, said on standard error, when it fails.
private func install(_ source: String, as copy: String) -> Bool {
    guard let installed = run(["install", "-m", "0755", source, copy]), installed.status == 0 else {
        FileHandle.standardError.write("keygate-bench: cannot install a copy of \(source); measuring it in place\n")
        return false
    }
    return true
}

/// Removes every installed copy.
func removeInstalledCopies() {
    for directory in installDirectories { removeTree(directory) }
}
