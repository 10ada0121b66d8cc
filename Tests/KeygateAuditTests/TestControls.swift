import KeygatePolicy

/// Access controls the audit tests put in events.
enum TestControls {
    /// A class alone.
    static let plain = try! AccessControl(protection: .whenUnlocked)
    /// `userPresence` on `whenUnlocked`.
    static let presence = try! AccessControl(protection: .whenUnlocked, flags: .userPresence)
}
