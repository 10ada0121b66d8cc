// The thresholds `make bench` checks (Benchmarks/thresholds.tsv): a regression fails the run
// instead of being narrated. Each line names a row of the table (by the start of its name and
// of its baseline's name) and the largest ratio it may show; a row that is missing, or whose
// ratio is not a number, fails too.

import Foundation

/// One line of the thresholds file.
struct Threshold {
    /// The start of the row's name.
    let row: String
    /// The start of the row's baseline name.
    let baseline: String
    /// The largest ratio (ours ÷ baseline) the row may show.
    let maximum: Double
    /// Why that bound (the target it guards, or the floor it sits on).
    let why: String
    /// Where it was read (`file:line`).
    let location: String

    /// The thresholds of `path`: tab-separated `row`, `baseline`, `maximum ratio`, `why`; `#`
    /// starts a comment line. A malformed line is an error naming it.
    static func read(_ path: String) throws -> [Threshold] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var thresholds: [Threshold] = []
        for (offset, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            let location = "\(path):\(offset + 1)"
            guard fields.count == 4, !fields[0].isEmpty, let maximum = Double(fields[2]), maximum > 0 else {
                throw BenchError("\(location): expected row<TAB>baseline<TAB>maximum ratio<TAB>why")
            }
            thresholds.append(
                Threshold(row: fields[0], baseline: fields[1], maximum: maximum, why: fields[3], location: location))
        }
        return thresholds
    }

    /// The ratio a row shows ("2.50×", "38×", "1.55–2.20×": the largest), or nil when it shows none.
    static func ratio(_ text: String) -> Double? {
        let cleaned = text.replacingOccurrences(of: "×", with: "").replacingOccurrences(of: ",", with: "")
        let parts = cleaned.split(separator: "–").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        return parts.max()
    }
}

/// What checking the table against the thresholds found.
struct ThresholdReport {
    /// One line per threshold: `ok` or `FAIL`, the row, its ratio and the bound.
    var lines: [String] = []
    /// Whether any threshold failed.
    var failed = false

    /// Checks `rows` against `thresholds`.
    init(rows: [Row], thresholds: [Threshold]) {
        for threshold in thresholds {
            let matching = rows.filter {
                $0.name.hasPrefix(threshold.row) && $0.baselineName.hasPrefix(threshold.baseline)
            }
            let label = "\(threshold.row) ÷ \(threshold.baseline.isEmpty ? "its baseline" : threshold.baseline)"
            guard !matching.isEmpty else {
                failed = true
                lines.append("FAIL \(label): no such row in this run (\(threshold.location))")
                continue
            }
            for row in matching {
                guard let ratio = Threshold.ratio(row.ratio) else {
                    failed = true
                    lines.append("FAIL \(row.name): no ratio (\(row.ratio)) to check against ≤ \(threshold.maximum)×")
                    continue
                }
                let ok = ratio <= threshold.maximum
                if !ok { failed = true }
                lines.append(
                    "\(ok ? "ok  " : "FAIL") \(row.name) ÷ \(row.baselineName): \(row.ratio) (≤ \(format(threshold.maximum, digits: 2))×: \(threshold.why))"
                )
            }
        }
    }
}

/// A failure of the bench itself, named.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
