/// Decides whether one access control is at least as strong as another.
///
/// A is at least as strong as B when every situation that lets A's item be read also lets
/// B's be read. A situation is a set of proved factors (passcode, biometry, companion,
/// application password) and a device state: locked or not, unlocked since boot or not,
/// passcode set or not, the biometric enrollment unchanged since the item was added or not,
/// and whether the item is still on the device it was created on (a `ThisDeviceOnly` item
/// never leaves it, so those classes are stronger). That is 384 situations; an access
/// control is reduced to the set of situations it allows, and "at least as strong" is set
/// inclusion. The model matches ``Evaluator`` exactly (tested over every valid flag
/// combination × class).
///
/// The resulting order on protection classes is partial:
/// `whenPasscodeSetThisDeviceOnly` ≥ `whenUnlockedThisDeviceOnly` ≥ `whenUnlocked` ≥
/// `afterFirstUnlock` ≥ `always`, and `whenUnlockedThisDeviceOnly` ≥
/// `afterFirstUnlockThisDeviceOnly` ≥ `alwaysThisDeviceOnly` ≥ `always`, each
/// `…ThisDeviceOnly` ≥ its plain class; `whenUnlocked` and `afterFirstUnlockThisDeviceOnly`
/// are not comparable (one survives a migration, the other works while locked).
public enum StrengthAnalysis {
    /// One situation: proved factors and device state.
    public struct Situation: Hashable, Sendable {
        /// The factors proved (fresh).
        public var proved: FactorSet
        /// The biometric enrollment is the one the item was bound to.
        public var enrollmentUnchanged: Bool
        /// A passcode is set.
        public var passcodeSet: Bool
        /// The device has been unlocked since boot.
        public var unlockedSinceBoot: Bool
        /// The device is unlocked now (implies unlocked since boot).
        public var unlocked: Bool
        /// The item is on the device it was created on (not restored elsewhere).
        public var onOriginalDevice: Bool
    }

    /// Every situation, in a fixed order (384 of them).
    public static let situations: [Situation] = {
        var all: [Situation] = []
        for proved in 0..<UInt8(16) {
            for enrollment in [false, true] {
                for passcode in [false, true] {
                    for lock in 0..<3 {
                        for original in [false, true] {
                            all.append(
                                Situation(
                                    proved: FactorSet(rawValue: proved), enrollmentUnchanged: enrollment,
                                    passcodeSet: passcode, unlockedSinceBoot: lock >= 1, unlocked: lock == 2,
                                    onOriginalDevice: original))
                        }
                    }
                }
            }
        }
        return all
    }()

    /// The situations an access control allows, one bit each in ``situations`` order.
    public struct SituationSet: Hashable, Sendable {
        fileprivate var words: [UInt64]

        /// True when every situation in `self` is also in `other`.
        public func isSubset(of other: SituationSet) -> Bool {
            for index in words.indices where words[index] & ~other.words[index] != 0 { return false }
            return true
        }

        /// How many situations are in the set.
        public var count: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }
    }

    /// Whether an item protected by `control` can be read in `situation`.
    public static func allows(_ control: AccessControl, in situation: Situation) -> Bool {
        if control.isPrivateKeyUsage { return false }
        // Without a passcode the class keys are not protected by one: `ak`/`aku` stay available
        // while locked and `ck`/`cku` before the first unlock ("Apple behaviour and our choices").
        let unlocked = situation.unlocked || !situation.passcodeSet
        let unlockedSinceBoot = situation.unlockedSinceBoot || !situation.passcodeSet
        let classOK: Bool =
            switch control.protection {
            case .whenPasscodeSetThisDeviceOnly:
                situation.unlocked && situation.passcodeSet && situation.onOriginalDevice
            case .whenUnlockedThisDeviceOnly: unlocked && situation.onOriginalDevice
            case .whenUnlocked: unlocked
            case .afterFirstUnlockThisDeviceOnly: unlockedSinceBoot && situation.onOriginalDevice
            case .afterFirstUnlock: unlockedSinceBoot
            case .alwaysThisDeviceOnly: situation.onOriginalDevice
            case .always: true
            }
        guard classOK else { return false }
        if control.requiresApplicationPassword && !situation.proved.contains(.applicationPassword) { return false }
        let constraint = control.constraint
        switch constraint.kind {
        case .allow: return true
        case .deny: return false
        case .leaves: break
        }
        let passcode = situation.proved.contains(.passcode) && situation.passcodeSet
        let biometry = situation.proved.contains(.biometry)
        var satisfied = 0
        for leaf in constraint.leaves.members {
            let met: Bool =
                switch leaf {
                case .devicePolicy: biometry || passcode
                case .passcode: passcode
                case .biometryAny: biometry
                case .biometryCurrentSet: biometry && situation.enrollmentUnchanged
                default: situation.proved.contains(.companion)
                }
            if met { satisfied += 1 }
        }
        return satisfied >= constraint.threshold
    }

    /// The set of situations `control` allows.
    public static func allowedSituations(_ control: AccessControl) -> SituationSet {
        var words = [UInt64](repeating: 0, count: (situations.count + 63) / 64)
        for (index, situation) in situations.enumerated() where allows(control, in: situation) {
            words[index / 64] |= 1 << UInt64(index % 64)
        }
        return SituationSet(words: words)
    }

    /// True when `a` is at least as strong as `b`: every situation allowing `a` allows `b`.
    public static func isAtLeastAsStrong(_ a: AccessControl, as b: AccessControl) -> Bool {
        allowedSituations(a).isSubset(of: allowedSituations(b))
    }

    /// The access control a `require at-least` effect names: its flags under its class, or
    /// under `always` (the weakest class) when it names none.
    /// - Throws: ``KeygateError`` (`errSecParam`) when the flags form no valid access control.
    public static func minimum(of effect: PolicyEffect) throws(KeygateError) -> AccessControl {
        guard case .atLeast(let protection, let flags) = effect else {
            throw KeygateError(.param, "not a require at-least effect")
        }
        return try AccessControl(protection: protection ?? .always, flags: flags)
    }

    /// Every access control an add accepts (valid flags, a class that is not deprecated, no
    /// `privateKeyUsage`), with the situations it allows.
    public static let addable: [(control: AccessControl, allowed: SituationSet)] = {
        var result: [(AccessControl, SituationSet)] = []
        let bits = AccessControlFlags.named.map(\.flag).filter { $0 != .privateKeyUsage }
        for mask in 0..<(1 << bits.count) {
            var flags = AccessControlFlags()
            for (index, bit) in bits.enumerated() where mask & (1 << index) != 0 { flags.formUnion(bit) }
            for protection in ProtectionClass.allCases where !protection.isDeprecated {
                guard let control = try? AccessControl(protection: protection, flags: flags) else { continue }
                result.append((control, allowedSituations(control)))
            }
        }
        return result
    }()

    /// True when some access control an add accepts is at least as strong as the effect's minimum.
    public static func isSatisfiable(_ effect: PolicyEffect) -> Bool {
        guard let minimum = try? minimum(of: effect) else { return false }
        let floor = allowedSituations(minimum)
        return addable.contains { $0.allowed.isSubset(of: floor) }
    }
}
