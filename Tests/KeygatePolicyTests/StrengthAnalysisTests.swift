import KeygatePolicy
import Testing

/// The strength order is checked against the evaluator itself: for every valid flag
/// combination × class, the situations the model allows are exactly those in which the
/// evaluator allows a read; so "A at least as strong as B" (inclusion of allowed situations)
/// is the definition in the issue, exhaustively.
@Suite struct StrengthAnalysisTests {
    static let bound = EnrollmentSetHash(templateIDs: ["f1"])!
    static let other = EnrollmentSetHash(templateIDs: ["f2"])!

    /// Every access control flags can make (privateKeyUsage included) under every class.
    static let controls: [AccessControl] = {
        var all: [AccessControl] = []
        var seen: Set<AccessControl> = []
        let bits = AccessControlFlags.named.map(\.flag)
        for mask in 0..<(1 << bits.count) {
            var flags = AccessControlFlags()
            for (index, bit) in bits.enumerated() where mask & (1 << index) != 0 { flags.formUnion(bit) }
            for protection in ProtectionClass.allCases {
                if let control = try? AccessControl(protection: protection, flags: flags), seen.insert(control).inserted
                {
                    all.append(control)
                }
            }
        }
        return all
    }()

    /// What the evaluator says for `situation`: allowed reads only, proofs made now.
    static func evaluatorAllows(_ control: AccessControl, _ situation: StrengthAnalysis.Situation) -> Bool {
        if !situation.onOriginalDevice && control.protection.isThisDeviceOnly { return false }
        let now = Timestamp(seconds: 1_000)
        let enrollment = situation.enrollmentUnchanged ? bound : other
        var state = AuthenticationState(
            device: DeviceState(
                isLocked: !situation.unlocked, hasBeenUnlockedSinceBoot: situation.unlockedSinceBoot,
                isPasscodeSet: situation.passcodeSet),
            biometry: BiometryState(isAvailable: true, enrollment: enrollment), isCompanionAvailable: true,
            interaction: .fail)
        for factor in situation.proved.factors {
            state.proofs.record(Proof(factor: factor, time: now, enrollment: factor == .biometry ? enrollment : nil))
        }
        let item = control.needsBinding ? control.bound(to: bound) : control
        return Evaluator().evaluate(item, operation: .read, state: state, now: now).outcome == .allow
    }

    @Test func theModelIsTheEvaluatorInEverySituation() {
        #expect(Self.controls.count > 300)
        var mismatches: [String] = []
        for control in Self.controls {
            for situation in StrengthAnalysis.situations
            where StrengthAnalysis.allows(control, in: situation) != Self.evaluatorAllows(control, situation) {
                mismatches.append("\(control.textForm) in \(situation)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    /// Exhaustive over all pairs: the function agrees with the definition computed from the
    /// evaluator, and the order is reflexive and transitive.
    @Test func atLeastAsStrongOverEveryPair() {
        // The definition, from the evaluator alone: one bit per situation.
        let definition: [[UInt64]] = Self.controls.map { control in
            var words = [UInt64](repeating: 0, count: (StrengthAnalysis.situations.count + 63) / 64)
            for (index, situation) in StrengthAnalysis.situations.enumerated()
            where Self.evaluatorAllows(control, situation) {
                words[index / 64] |= 1 << UInt64(index % 64)
            }
            return words
        }
        let bitsets = Self.controls.map(StrengthAnalysis.allowedSituations)
        var disagreements = 0
        var comparable = 0
        for a in Self.controls.indices {
            for b in Self.controls.indices {
                var atLeast = true
                for word in 0..<definition[a].count where definition[a][word] & ~definition[b][word] != 0 {
                    atLeast = false
                    break
                }
                if atLeast { comparable += 1 }
                if bitsets[a].isSubset(of: bitsets[b]) != atLeast { disagreements += 1 }
            }
        }
        #expect(disagreements == 0)
        #expect(comparable > Self.controls.count)  // more than reflexivity: the order is not trivial
        for a in Self.controls where a.protection == .whenUnlocked {
            #expect(StrengthAnalysis.isAtLeastAsStrong(a, as: a))
        }
    }

    @Test func classOrderIncludingThisDeviceOnly() throws {
        func control(_ protection: ProtectionClass) throws -> AccessControl {
            try AccessControl(protection: protection)
        }
        let chain: [ProtectionClass] = [
            .whenPasscodeSetThisDeviceOnly, .whenUnlockedThisDeviceOnly, .whenUnlocked, .afterFirstUnlock, .always,
        ]
        for (stronger, weaker) in zip(chain, chain.dropFirst()) {
            #expect(StrengthAnalysis.isAtLeastAsStrong(try control(stronger), as: try control(weaker)))
            #expect(!StrengthAnalysis.isAtLeastAsStrong(try control(weaker), as: try control(stronger)))
        }
        #expect(
            StrengthAnalysis.isAtLeastAsStrong(
                try control(.afterFirstUnlockThisDeviceOnly), as: try control(.afterFirstUnlock)))
        #expect(StrengthAnalysis.isAtLeastAsStrong(try control(.alwaysThisDeviceOnly), as: try control(.always)))
        // Not comparable: one survives a migration, the other works while locked.
        #expect(
            !StrengthAnalysis.isAtLeastAsStrong(
                try control(.whenUnlocked), as: try control(.afterFirstUnlockThisDeviceOnly)))
        #expect(
            !StrengthAnalysis.isAtLeastAsStrong(
                try control(.afterFirstUnlockThisDeviceOnly), as: try control(.whenUnlocked)))
    }

    @Test func flagOrder() throws {
        func control(_ flags: AccessControlFlags) throws -> AccessControl {
            try AccessControl(protection: .whenUnlocked, flags: flags)
        }
        #expect(StrengthAnalysis.isAtLeastAsStrong(try control(.biometryCurrentSet), as: try control(.biometryAny)))
        #expect(!StrengthAnalysis.isAtLeastAsStrong(try control(.biometryAny), as: try control(.biometryCurrentSet)))
        #expect(StrengthAnalysis.isAtLeastAsStrong(try control(.devicePasscode), as: try control(.userPresence)))
        #expect(
            StrengthAnalysis.isAtLeastAsStrong(
                try control([.biometryAny, .and, .devicePasscode]),
                as: try control([.biometryAny, .or, .devicePasscode])))
        #expect(!StrengthAnalysis.isAtLeastAsStrong(try control([]), as: try control(.devicePasscode)))
        #expect(
            StrengthAnalysis.isAtLeastAsStrong(
                try control([.devicePasscode, .applicationPassword]), as: try control(.devicePasscode)))
    }
}
