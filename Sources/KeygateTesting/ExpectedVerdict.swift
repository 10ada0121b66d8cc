public import KeygateAudit
public import KeygatePolicy

/// The decision an ``AuditRecorder`` assertion expects: a verdict, and for a denial
/// optionally its status, written as the evaluator writes an outcome (`.deny(.interactionNotAllowed)`).
public struct ExpectedVerdict: Hashable, Sendable {
    /// The verdict the record must give.
    public var verdict: AuditEvent.Verdict
    /// The status the record must give, when one is expected.
    public var status: KeygateStatus?

    /// An expectation of `verdict`, with `status` when given.
    public init(_ verdict: AuditEvent.Verdict, status: KeygateStatus? = nil) {
        self.verdict = verdict
        self.status = status
    }

    /// A denial with `status`.
    public static func deny(_ status: KeygateStatus) -> ExpectedVerdict { ExpectedVerdict(.deny, status: status) }

    /// Allowed.
    public static let allow = ExpectedVerdict(.allow)
    /// Denied, with any status.
    public static let deny = ExpectedVerdict(.deny)
    /// A proof was needed first.
    public static let authenticate = ExpectedVerdict(.authenticate)
    /// An authentication attempt proved its factors.
    public static let proved = ExpectedVerdict(.proved)
    /// An authentication attempt failed.
    public static let failed = ExpectedVerdict(.failed)
    /// The user cancelled the prompt.
    public static let cancelled = ExpectedVerdict(.cancelled)
    /// The factor was locked out.
    public static let lockedOut = ExpectedVerdict(.lockedOut)
    /// The factor could not be used.
    public static let unavailable = ExpectedVerdict(.unavailable)
    /// The trail's head was brought forward.
    public static let recovered = ExpectedVerdict(.recovered)
    /// The store's anchor was replaced by this trail.
    public static let restarted = ExpectedVerdict(.restarted)
}
