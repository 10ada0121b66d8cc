// The sizes of one run: `tiny` (CI: every benchmark once, in seconds) or `full` (the table).

import Foundation
import Glibc

/// How much each benchmark does.
struct Scale {
    /// `tiny` or `full`.
    var name: String
    /// Evaluator decisions per batch (seven batches of each row, interleaved).
    var decisions: Int
    /// Item counts of the stores read from (each also holds `largeItems` 4 KiB items).
    var readStores: [Int]
    /// 4 KiB items in every store.
    var largeItems: Int
    /// Interleaved batches for the in-process rows.
    var batches: Int
    /// Reads per batch with the slowest audit mode (the durable trail); faster modes do more.
    var slowReads: Int
    /// Adds per batch, per mode.
    var adds: Int
    /// Adds per process in the four-process row.
    var processAdds: Int
    /// Whole-process runs of `keygate get` and its baselines (the median is kept).
    var processRuns: Int
    /// Item counts for `keygate list`.
    var listStores: [Int]
    /// Record counts for `keygate audit verify`.
    var trails: [Int]
    /// The store opened, and the reads made, for the peak-RSS row.
    var rssStore: Int
    var rssReads: Int
    /// PAM proofs per row.
    var proofs: Int
    /// How long a `list` or `verify` run may take before it is stopped and reported as such.
    var timeoutSeconds: Int

    static let tiny = Scale(
        name: "tiny", decisions: 2_000, readStores: [300], largeItems: 4, batches: 1, slowReads: 5, adds: 5,
        processAdds: 5, processRuns: 1, listStores: [300], trails: [300], rssStore: 300, rssReads: 100,
        proofs: 2, timeoutSeconds: 120)

    /// The full table's in-process rows at the 10k store only (no 1M store to build): for
    /// profiling one change quickly (`--scale quick --only reads,adds`).
    static let quick = Scale(
        name: "quick", decisions: 300_000, readStores: [10_000], largeItems: 100, batches: 5,
        slowReads: 60, adds: 60, processAdds: 100, processRuns: 21, listStores: [10_000, 200_000],
        trails: [10_000], rssStore: 10_000, rssReads: 10_000, proofs: 1_000, timeoutSeconds: 60)

    static let full = Scale(
        name: "full", decisions: 300_000, readStores: [10_000, 1_000_000], largeItems: 100, batches: 5,
        slowReads: 60, adds: 60, processAdds: 100, processRuns: 21, listStores: [10_000, 200_000],
        trails: [10_000, 200_000], rssStore: 1_000_000, rssReads: 10_000, proofs: 1_000, timeoutSeconds: 60)
}
