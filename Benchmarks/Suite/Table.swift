// The one table `make bench` prints: our figure, the baseline measured in the same run, the
// ratio, and the target from issue 10 ("Must reach").

import Foundation
import Glibc

/// One row of the table.
struct Row {
    /// What was measured, with its unit.
    var name: String
    /// Our figure, already formatted.
    var ours: String
    /// What the baseline is.
    var baselineName: String = ""
    /// The baseline's figure, already formatted.
    var baseline: String = ""
    /// ours / baseline, formatted (for rates, baseline / ours: "how many times slower").
    var ratio: String = ""
    /// The target from issue 10.
    var target: String = ""
}

/// Collects rows and prints them as one table.
final class Table {
    private(set) var rows: [Row] = []
    private var sections: [(title: String, start: Int)] = []

    /// Starts a section: its rows follow under a heading line.
    func section(_ title: String) {
        sections.append((title, rows.count))
        FileHandle.standardError.write("bench: \(title)…\n")
    }

    /// Adds a row (and echoes it to standard error, so a long run shows progress).
    func add(_ row: Row) {
        rows.append(row)
        FileHandle.standardError.write("  \(row.name): \(row.ours) | \(row.baseline) | \(row.ratio)\n")
    }

    /// The table as GitHub-flavoured Markdown, one heading row per section.
    func markdown() -> String {
        var lines = [
            "| row | Keygate | baseline | baseline figure | ratio | must reach |", "|---|---|---|---|---|---|",
        ]
        for (index, row) in rows.enumerated() {
            if let section = sections.first(where: { $0.start == index }) {
                lines.append("| **\(section.title)** | | | | | |")
            }
            let cells = [row.name, row.ours, row.baselineName, row.baseline, row.ratio, row.target]
            lines.append(
                "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }
}

extension FileHandle {
    /// Writes text to a stream (standard error here: progress, never the table).
    func write(_ text: String) { write(Data(text.utf8)) }
}

// MARK: - Formatting

/// `value` with `digits` decimals.
func format(_ value: Double, digits: Int = 1) -> String {
    guard value.isFinite else { return "n/a" }
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = Int((value * scale).rounded())
    guard digits > 0 else { return grouped(scaled) }
    let whole = scaled / Int(scale)
    let fraction = String(abs(scaled) % Int(scale))
    let sign = scaled < 0 && whole == 0 ? "-" : ""
    return sign + grouped(whole) + "." + String(repeating: "0", count: digits - fraction.count) + fraction
}

/// An integer with thousands separators: 1,234,567.
func grouped(_ value: Int) -> String {
    let digits = String(abs(value))
    var out = ""
    for (index, character) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { out += "," }
        out.append(character)
    }
    return (value < 0 ? "-" : "") + out
}

/// A duration in the unit that reads best: ns, µs, ms or s.
func duration(_ seconds: Double) -> String {
    switch seconds {
    case ..<1e-6: format(seconds * 1e9) + " ns"
    case ..<1e-3: format(seconds * 1e6) + " µs"
    case ..<1: format(seconds * 1e3) + " ms"
    default: format(seconds, digits: 2) + " s"
    }
}

/// `ours / baseline` as "2.5×".
func ratio(_ ours: Double, _ baseline: Double) -> String {
    guard baseline > 0, ours.isFinite, baseline.isFinite else { return "n/a" }
    return format(ours / baseline, digits: ours / baseline < 10 ? 2 : 0) + "×"
}

// MARK: - Timing

/// Seconds on the monotonic clock.
func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// The median of `values` (0 for none).
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}
