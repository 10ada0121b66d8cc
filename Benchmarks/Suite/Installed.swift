// Every executable a whole-process row runs (keygate, keygated, the hello world) is measured as
// `make install` places it: a copy written by install(1), not the linker's output file.
//
// The linker writes its output through a shared memory map, so most of that file's page cache is
// made of single 4 KiB pages (4,248 of the 7,869 pages of a release `keygate`, read from
// /proc/kpageflags). A file written with write(2) (install, cp, a package manager), or read
// back from the disk, sits in large folios (1 to 208 single pages of 7,869). The kernel maps a
// large folio around a page fault with less work than sixteen single pages, so the same bytes
// start slower from the linker's output: a `keygate get` 0.25-0.45 ms slower on the 2-core VM of
// Benchmarks/RESULTS.md (session 23). A user runs the installed file.

import Foundation
import Glibc

/// The directories the installed copies live in, removed by ``removeInstalledCopies()``.
nonisolated(unsafe) private var installDirectories: [String] = []

/// `binary` copied by `install -m 0755` into a private directory, with `keygated` beside it
/// when there is one beside `binary`, so the broker rows find the daemon as before; `binary`
/// itself, said on standard error, when the copy fails.
func installedCopy(of binary: String) -> String {
    let source = URL(fileURLWithPath: binary)
    let directory = temporaryDirectory("installed")
    installDirectories.append(directory)
    let copy = directory + "/" + source.lastPathComponent
    guard let installed = run(["install", "-m", "0755", binary, copy]), installed.status == 0 else {
        FileHandle.standardError.write("keygate-bench: cannot install a copy of \(binary); measuring it in place\n")
        return binary
    }
    let daemon = source.deletingLastPathComponent().appendingPathComponent("keygated").path
    if access(daemon, X_OK) == 0 { _ = run(["install", "-m", "0755", daemon, directory + "/keygated"]) }
    return copy
}

/// Removes every installed copy.
func removeInstalledCopies() {
    for directory in installDirectories { removeTree(directory) }
}
