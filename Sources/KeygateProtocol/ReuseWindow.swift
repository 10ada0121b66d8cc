public import KeygatePolicy

/// The reuse window a copyMatching, update or delete request carries, checked: how many seconds
/// an earlier proof of the same caller may stand in for a new one (0: none, always ask).
///
/// Apple caps `touchIDAuthenticationAllowableReuseDuration` at 300 s; a request asking for more
/// is refused with `errSecParam` (by the client before sending, and by the daemon when it turns
/// the frame into its request, before anything is proved), never clamped silently. A value of
/// this type is within the cap by construction, so nothing past that check bounds it again.
public struct ReuseWindow: Hashable, Sendable {
    /// The largest window a request may carry: 300 s.
    public static let maximumSeconds = UInt32(AuthenticationState.maximumReuseSeconds)

    /// No reuse: every proof is asked for.
    public static let none = ReuseWindow(checked: 0)

    /// The window, 0...300 seconds.
    public let seconds: Int

    /// The window a request asked for.
    /// - Throws: `errSecParam` naming the field when `seconds` is above 300.
    public init(seconds: UInt32) throws(KeygateError) {
        guard seconds <= Self.maximumSeconds else {
            throw KeygateError(.param, "reuseSeconds: \(seconds) is above the maximum of \(Self.maximumSeconds) s")
        }
        self.init(checked: Int(seconds))
    }

    private init(checked seconds: Int) { self.seconds = seconds }

    /// Checks `seconds` against ``maximumSeconds``, for a client about to send it.
    /// - Throws: `errSecParam` naming the field when `seconds` is above 300.
    public static func check(_ seconds: UInt32) throws(KeygateError) {
        _ = try ReuseWindow(seconds: seconds)
    }
}
