// Benchmarks/RESULTS.md as `make bench` writes it: the machine, the date, the commit and the
// scale, the table (every row beside its baseline measured in the same run), and what the
// thresholds check said. The method is Benchmarks/METHOD.md; earlier results are in git.

import Foundation
import Glibc

enum ResultsPage {
    /// The page for `table`, run at `scale` for `seconds`, of `commit`, with `report`.
    static func markdown(
        table: Table, scale: String, seconds: Double, commit: String?, report: ThresholdReport?
    ) -> String {
        var lines = [
            "# Benchmark results", "",
            "Written by `make bench` (`keygate-bench --results`); how each row is measured is in",
            "[METHOD.md](METHOD.md), the bounds it checks in [thresholds.tsv](thresholds.tsv). Earlier",
            "results are in git history.", "",
            "- **Machine:** \(machine())",
            "- **Date:** \(date())",
            "- **Commit:** \(commit ?? "unknown")",
            "- **Scale:** \(scale), \(format(seconds, digits: 0)) s", "",
            table.markdown(), "",
            "Ratios are ours ÷ baseline (for rates, baseline ÷ ours).",
        ]
        if let report {
            lines += ["", "## Thresholds", "", report.failed ? "**Some failed.**" : "All met.", ""]
            lines += report.lines.map { "- " + $0 }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The processor, its cores, the kernel and the system.
    static func machine() -> String {
        let cpu =
            (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?.split(separator: "\n")
            .first { $0.hasPrefix("model name") }.flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown processor"
        let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        var names = utsname()
        uname(&names)
        let kernel = withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let system =
            (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8))?.split(separator: "\n")
            .first { $0.hasPrefix("PRETTY_NAME=") }.map {
                $0.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: ["\""])
            }
            ?? "unknown system"
        return "\(cpu), \(cores) cores, Linux \(kernel), \(system)"
    }

    /// Now, in UTC, to the minute.
    static func date() -> String {
        var seconds = time(nil)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)) UTC"
    }
}
