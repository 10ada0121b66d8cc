import KeygatePolicy

extension Keychain {
    /// The leaves whose evaluation reads the device's biometry: `userPresence` (biometry, else
    /// the passcode), `biometryAny` and `biometryCurrentSet`.
    static let biometryLeaves: Constraint.LeafSet = [.devicePolicy, .biometryAny, .biometryCurrentSet]

    /// Reads the device's biometry into `context` (once per call: see
    /// `AuthenticationContext.refreshDeferringBiometry(from:)`) when one of `controls` or
    /// `requirements` involves it. A call over plain items never asks the sensor (fprintd).
    func readBiometry(
        for controls: [AccessControl], requirements: [Requirement] = [], context: AuthenticationContext
    ) {
        let needed =
            controls.contains { !$0.constraint.leaves.isDisjoint(with: Self.biometryLeaves) }
            || requirements.contains { $0.allFactors.contains(.biometry) }
        if needed { context.readDeferredBiometry() }
    }
}
