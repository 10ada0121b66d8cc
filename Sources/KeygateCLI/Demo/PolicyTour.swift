import KeygatePolicy

/// The second part of `keygate demo`: the engine's decisions for realistic situations, as a
/// table (dry runs, no store).
enum PolicyTour {
    /// One row of the tour.
    struct Scenario {
        let situation: String
        let flags: AccessControlFlags
        let protection: ProtectionClass
        let operation: Operation
        let state: AuthenticationState
    }

    static let now = Timestamp(seconds: 1_800_000_000)
    static let enrolled = EnrollmentSetHash(templateIDs: ["right-index", "left-index"])
    static let reenrolled = EnrollmentSetHash(templateIDs: ["right-index", "left-index", "right-thumb"])

    static func proof(_ factor: Factor, secondsAgo: Double, enrollment: EnrollmentSetHash? = enrolled) -> Proof {
        Proof(
            factor: factor, time: now.adding(seconds: -secondsAgo), enrollment: factor == .biometry ? enrollment : nil)
    }

    static func state(
        locked: Bool = false, sinceBoot: Bool = true, passcode: Bool = true, biometry: Bool = true,
        enrollment: EnrollmentSetHash? = enrolled, lockedOut: Bool = false, proofs: [Proof] = [],
        reuse: Int = 10, interaction: InteractionPolicy = .allow
    ) -> AuthenticationState {
        var recorded = Proofs()
        for proof in proofs { recorded.record(proof) }
        return AuthenticationState(
            device: DeviceState(isLocked: locked, hasBeenUnlockedSinceBoot: sinceBoot, isPasscodeSet: passcode),
            biometry: BiometryState(isAvailable: biometry, enrollment: enrollment, isLockedOut: lockedOut),
            proofs: recorded, reuseSeconds: reuse, interaction: interaction)
    }

    static let scenarios: [Scenario] = [
        Scenario(
            situation: "plain item, laptop unlocked", flags: [], protection: .whenUnlocked, operation: .read,
            state: state()),
        Scenario(
            situation: "plain item, screen locked", flags: [], protection: .whenUnlocked, operation: .read,
            state: state(locked: true)),
        Scenario(
            situation: "after-first-unlock item, just rebooted", flags: [], protection: .afterFirstUnlock,
            operation: .read, state: state(sinceBoot: false)),
        Scenario(
            situation: "refresh token, no proof yet", flags: .userPresence, protection: .whenUnlocked,
            operation: .read, state: state()),
        Scenario(
            situation: "refresh token, fingerprint locked out", flags: .userPresence, protection: .whenUnlocked,
            operation: .read, state: state(lockedOut: true)),
        Scenario(
            situation: "password item, typed 3 s ago (reuse 10 s)", flags: .devicePasscode,
            protection: .whenUnlockedThisDeviceOnly, operation: .read,
            state: state(proofs: [proof(.passcode, secondsAgo: 3)])),
        Scenario(
            situation: "password item, typed 2 min ago (reuse 10 s)", flags: .devicePasscode,
            protection: .whenUnlockedThisDeviceOnly, operation: .read,
            state: state(proofs: [proof(.passcode, secondsAgo: 120)])),
        Scenario(
            situation: "payment token, a finger was added", flags: .biometryCurrentSet,
            protection: .whenPasscodeSetThisDeviceOnly, operation: .read,
            state: state(enrollment: reenrolled, proofs: [proof(.biometry, secondsAgo: 0, enrollment: reenrolled)])),
        Scenario(
            situation: "biometryAny item, a finger was added", flags: .biometryAny, protection: .whenUnlocked,
            operation: .read,
            state: state(enrollment: reenrolled, proofs: [proof(.biometry, secondsAgo: 1, enrollment: reenrolled)])),
        Scenario(
            situation: "biometryAny item, nothing enrolled", flags: .biometryAny, protection: .whenUnlocked,
            operation: .read, state: state(enrollment: nil)),
        Scenario(
            situation: "recovery key (finger AND password), password only",
            flags: [.biometryAny, .devicePasscode, .and],
            protection: .whenUnlockedThisDeviceOnly, operation: .read,
            state: state(proofs: [proof(.passcode, secondsAgo: 1)])),
        Scenario(
            situation: "passcode-only item after the passcode was removed", flags: [],
            protection: .whenPasscodeSetThisDeviceOnly, operation: .read, state: state(passcode: false)),
        Scenario(
            situation: "background job may not prompt", flags: .userPresence, protection: .afterFirstUnlock,
            operation: .read, state: state(interaction: .fail)),
        Scenario(
            situation: "delete a protected item while locked", flags: .biometryCurrentSet, protection: .whenUnlocked,
            operation: .delete, state: state(locked: true)),
        Scenario(
            situation: "add a passcode-only item, no passcode", flags: [], protection: .whenPasscodeSetThisDeviceOnly,
            operation: .add, state: state(passcode: false)),
        Scenario(
            situation: "add a payment token, binds the finger set", flags: .biometryCurrentSet,
            protection: .whenUnlockedThisDeviceOnly, operation: .add, state: state()),
    ]

    /// The table of decisions.
    static func table() -> String {
        let evaluator = Evaluator()
        var rows: [[String]] = [["situation", "access control", "op", "decision", "why"]]
        for scenario in scenarios {
            var control: AccessControl
            do {
                control = try AccessControl(protection: scenario.protection, flags: scenario.flags)
            } catch {
                rows.append([scenario.situation, scenario.flags.description, "-", "error", error.description])
                continue
            }
            if control.needsBinding, scenario.operation != .add, let enrolled {
                control = control.bound(to: enrolled)
            }
            let decision = evaluator.evaluate(control, operation: scenario.operation, state: scenario.state, now: now)
            let outcome =
                switch decision.outcome {
                case .allow: "allow"
                case .deny(let status): "deny \(status.name ?? String(status.rawValue))"
                case .authenticate(let requirement): "ask: \(requirement)"
                }
            let why = decision.explanation
            rows.append([
                scenario.situation, "\(scenario.flags)@\(scenario.protection.rawValue)", scenario.operation.rawValue,
                outcome, why,
            ])
        }
        return Table(rows).rendered
    }
}

/// A plain-text table with a header rule.
struct Table {
    let rows: [[String]]

    init(_ rows: [[String]]) { self.rows = rows }

    var rendered: String {
        let columns = rows.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in rows {
            for (index, cell) in row.enumerated() where index < columns - 1 {
                widths[index] = max(widths[index], cell.count)
            }
        }
        var lines: [String] = []
        for (number, row) in rows.enumerated() {
            let cells = row.enumerated().map { index, cell in
                index < columns - 1 ? cell.padding(to: widths[index]) : cell
            }
            lines.append(cells.joined(separator: "  "))
            if number == 0 {
                lines.append(
                    widths.dropLast().map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "  ---")
            }
        }
        return lines.joined(separator: "\n")
    }
}
