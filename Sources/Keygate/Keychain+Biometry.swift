import KeygatePolicy

extension Keychain {
    /// The leaves whose evaluation reads the device's biometry: `userPresence` (biometry, else
    /// the passcode), `biometryAny` and `biometryCurrentSet`.
    static let biometryLeaves: Constraint.LeafSet = [.devicePolicy, .biometryAny, .biometryCurrentSet]

    /// Reads the device's biometry into `context` (once per call: see
    /// `AuthenticationContext.refreshDeferringBiometry(from:)`) when one of `controls` or
    /// `requirements` involves it. A call over plain items never asks the sensor (fprintd).
    func readBiometry(
        for controls: some Sequence<AccessControl>, requirements: [Requirement] = [], context: AuthenticationContext
    ) {
        let needed =
            controls.contains { Self.readsBiometry($0) }
            || requirements.contains { $0.allFactors.contains(.biometry) }
        if needed { context.readDeferredBiometry() }
    }

    /// As above for one item's access control (a gated call makes no array for it).
    func readBiometry(for control: AccessControl, context: AuthenticationContext) {
        if Self.readsBiometry(control) { context.readDeferredBiometry() }
    }

    private static func readsBiometry(_ control: AccessControl) -> Bool {
        !control.constraint.leaves.isDisjoint(with: biometryLeaves)
    }
}
