public import KeygatePolicy

/// The reuse window a copyMatching, update or delete request carries: how many seconds an
/// earlier proof of the same caller may stand in for a new one (0: none, always ask).
///
/// Apple caps `touchIDAuthenticationAllowableReuseDuration` at 300 s; a request asking for more
/// is refused with `errSecParam` (by the client before sending, and by the daemon before the
/// facade sees it), never clamped silently.
public enum ReuseWindow {
    /// The largest window a request may carry: 300 s.
    public static let maximumSeconds = UInt32(AuthenticationState.maximumReuseSeconds)

    /// Checks `seconds` against ``maximumSeconds``.
    /// - Throws: `errSecParam` naming the field when `seconds` is above 300.
    public static func check(_ seconds: UInt32) throws(KeygateError) {
        guard seconds <= maximumSeconds else {
            throw KeygateError(.param, "reuseSeconds: \(seconds) is above the maximum of \(maximumSeconds) s")
        }
    }
}
