// Measures the evaluator's hot path: nanoseconds per decision for representative access
// controls and contexts, against the 100 ns budget. Build and run in release mode:
//
//     swift run -c release keygate-bench-evaluator [iterations]
//
// Run it under `valgrind --tool=memcheck` with two iteration counts to see that the number
// of heap allocations does not grow with the number of decisions.

import KeygatePolicy

let iterations = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 2_000_000
let budgetNanoseconds = 100.0
let now = Timestamp(seconds: 1_800_000_000)
let enrolled = EnrollmentSetHash(templateIDs: ["f1", "f2"])!

func state(locked: Bool = false, proofs: [Proof] = [], interaction: InteractionPolicy = .allow) -> AuthenticationState {
    var recorded = Proofs()
    for proof in proofs { recorded.record(proof) }
    return AuthenticationState(
        device: DeviceState(isLocked: locked), biometry: BiometryState(isAvailable: true, enrollment: enrolled),
        proofs: recorded, reuseSeconds: 10, interaction: interaction)
}

let passcode = Proof(factor: .passcode, time: now.adding(seconds: -2))
let biometry = Proof(factor: .biometry, time: now.adding(seconds: -1), enrollment: enrolled)

let cases: [(String, AccessControl, Operation, AuthenticationState)] = [
    ("no constraint, unlocked", try! AccessControl(protection: .whenUnlocked), .read, state()),
    ("ak item, locked", try! AccessControl(protection: .whenUnlocked), .read, state(locked: true)),
    ("userPresence, no proof", try! AccessControl(protection: .whenUnlocked, flags: .userPresence), .read, state()),
    (
        "biometryCurrentSet, fresh proof",
        try! AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: .biometryCurrentSet).bound(to: enrolled),
        .read, state(proofs: [biometry])
    ),
    (
        "bio and passcode, both fresh",
        try! AccessControl(protection: .whenUnlocked, flags: [.biometryAny, .devicePasscode]),
        .read, state(proofs: [passcode, biometry])
    ),
    (
        "bio or passcode, none, fail",
        try! AccessControl(protection: .whenUnlocked, flags: [.biometryAny, .devicePasscode, .or]),
        .read, state(interaction: .fail)
    ),
    ("add, binds enrollment", try! AccessControl(protection: .whenUnlocked, flags: .biometryCurrentSet), .add, state()),
]

let evaluator = Evaluator()
let clock = ContinuousClock()
var rows: [[String]] = [["decision", "result", "ns/decision", "budget", "within"]]
var sink = 0
for (name, control, operation, caseState) in cases {
    // Warm up, then time.
    for _ in 0..<10_000 {
        sink &+= evaluator.evaluate(control, operation: operation, state: caseState, now: now).reasons.count
    }
    let elapsed = clock.measure {
        for _ in 0..<iterations {
            sink &+= evaluator.evaluate(control, operation: operation, state: caseState, now: now).reasons.count
        }
    }
    let nanoseconds =
        (Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9) / Double(iterations)
    let decision = evaluator.evaluate(control, operation: operation, state: caseState, now: now)
    let result =
        switch decision.outcome {
        case .allow: "allow"
        case .deny(let status): "deny \(status.name ?? "")"
        case .authenticate(let requirement): "ask \(requirement)"
        }
    rows.append([
        name, result, String(format: nanoseconds), "\(Int(budgetNanoseconds))",
        nanoseconds <= budgetNanoseconds ? "yes" : "NO",
    ])
}

func String(format value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}

let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max()! }
for (index, row) in rows.enumerated() {
    print(row.enumerated().map { $1 + String(repeating: " ", count: widths[$0] - $1.count) }.joined(separator: "  "))
    if index == 0 { print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
}
print("\n\(iterations) decisions per row; baseline: the 100 ns per decision budget (checksum \(sink % 10)).")

// Organisation rules (see PolicyRows.swift).
let policyTable = policyRows(iterations: max(iterations / 100, 1_000))
let policyWidths = policyTable[0].indices.map { column in policyTable.map { $0[column].count }.max()! }
print("")
for (index, row) in policyTable.enumerated() {
    print(
        row.enumerated().map { $1 + String(repeating: " ", count: policyWidths[$0] - $1.count) }.joined(separator: "  ")
    )
    if index == 0 { print(policyWidths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
}
print("\nOrganisation rules: \(max(iterations / 100, 1_000)) decisions per row; baseline: the 10-rule row.")
