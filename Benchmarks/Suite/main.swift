// Keygate's benchmark suite: one table, every row our figure beside its baseline measured in
// the same run, the ratio, and the target from issue 10. Build and run in release mode:
//
//     make bench                    # BENCH_SCALE=full (default) or tiny
//     .build/release/keygate-bench [--scale tiny|quick|full] [--keygate PATH] [--markdown FILE]
//                                  [--thresholds FILE] [--results FILE] [--commit ID]
//
// --thresholds checks the table against a thresholds file (Thresholds.swift) and exits 1 when a
// bound is not met; --results writes the results page (ResultsPage.swift).
// Sections can be picked with --only evaluator,reads,adds,pam,process,broker,keys (default: all). The
// program starts itself again for the multi-process rows (`keygate-bench worker …`).

import Foundation
import Glibc
import KeygateBenchC

let arguments = Array(CommandLine.arguments.dropFirst())

// MARK: - Worker modes

if arguments.first == "worker", arguments.count >= 2 {
    let mode = arguments[1]
    let rest = Array(arguments.dropFirst(2))
    switch mode {
    case "add-keygate" where rest.count == 3, "add-c" where rest.count == 3:
        exit(await addWorker(mode, path: rest[0], tag: Int(rest[1]) ?? 0, count: Int(rest[2]) ?? 0))
    case "rss-keygate" where rest.count == 3, "rss-c" where rest.count == 3:
        exit(await rssWorker(mode, path: rest[0], items: Int(rest[1]) ?? 1, reads: Int(rest[2]) ?? 0))
    case "loop" where rest.count == 2:
        exit(await profileLoop(mode: rest[0], count: Int(rest[1]) ?? 0))
    case "time" where rest.count >= 2:
        exit(timeWorker(runs: Int(rest[0]) ?? 1, arguments: Array(rest.dropFirst())))
    default:
        FileHandle.standardError.write("keygate-bench: unknown worker \(arguments.joined(separator: " "))\n")
        exit(2)
    }
}

// MARK: - Options

func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

let environment = ProcessInfo.processInfo.environment
let scaleName = option("--scale") ?? environment["BENCH_SCALE"] ?? "full"
guard let scale = ["tiny": Scale.tiny, "quick": Scale.quick, "full": Scale.full][scaleName] else {
    FileHandle.standardError.write("keygate-bench: --scale is tiny, quick or full, not \(scaleName)\n")
    exit(2)
}
// Measured as installed (Installed.swift): a copy written by install(1), keygated beside it.
let keygateBinary = (option("--keygate") ?? environment["KEYGATE_BIN"]).map(installedCopy(of:))
let sections = Set(
    (option("--only") ?? "evaluator,reads,adds,pam,process,broker,keys").split(separator: ",").map(String.init))

// MARK: - The run

let table = Table()
let started = now()
do {
    if sections.contains("evaluator") {
        evaluatorRows(table, scale: scale)
        organisationRows(table, scale: scale)
    }
    if sections.contains("reads") { try await readRows(table, scale: scale) }
    if sections.contains("adds") { try await addRows(table, scale: scale) }
    if sections.contains("process") { try processRows(table, scale: scale, keygateBinary: keygateBinary) }
    if sections.contains("broker") { try await brokerRows(table, scale: scale, keygateBinary: keygateBinary) }
    if sections.contains("keys") { try keyRows(table, scale: scale, keygateBinary: keygateBinary) }
    // Last: it loads pam_wrapper into this process.
    if sections.contains("pam") { try await pamRows(table, scale: scale) }
} catch {
    FileHandle.standardError.write("keygate-bench: \(error)\n")
    print(table.markdown())
    removeInstalledCopies()
    exit(1)
}
removeInstalledCopies()

let markdown = table.markdown()
let seconds = now() - started
print(markdown)
print(
    "\nScale \(scale.name), \(format(seconds, digits: 0)) s. Ratios are ours ÷ baseline (for rates, baseline ÷ ours)."
)
if let file = option("--markdown") {
    _ = FileManager.default.createFile(atPath: file, contents: Data((markdown + "\n").utf8))
}
var report: ThresholdReport?
if let file = option("--thresholds") {
    do {
        report = ThresholdReport(rows: table.rows, thresholds: try Threshold.read(file))
    } catch {
        FileHandle.standardError.write("keygate-bench: \(error)\n")
        exit(2)
    }
    print("\nThresholds (\(file)):")
    for line in report!.lines { print("  " + line) }
}
if let file = option("--results") {
    let page = ResultsPage.markdown(
        table: table, scale: scale.name, seconds: seconds, commit: option("--commit"), report: report)
    _ = FileManager.default.createFile(atPath: file, contents: Data(page.utf8))
}
exit(lostWrites || report?.failed == true ? 1 : 0)
