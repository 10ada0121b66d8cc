public import KeygatePolicy

/// A fact the facade, the organisation rules or the trail itself adds to a record beside the
/// evaluator's reasons (``AuditEvent/reasons``): why a request was refused before any item was
/// looked at, that an item was invalidated and removed, how an authentication attempt ended.
///
/// A note is a typed value; its text is rendered only in the record's line (after the
/// evaluator's reasons, in the same `reasons` array) and read back by ``init(text:kind:)``.
public enum AuditNote: Hashable, Sendable {
    /// A request refused before any item was looked at, with the error's message (`refused: …`).
    case refused(String)
    /// A `biometryCurrentSet` item's bound enrollment set and the current one (`enrollment: bound to …, now …`).
    case enrollment(bound: EnrollmentSetHash?, now: EnrollmentSetHash?)
    /// The item no longer exists for this request and is removed (`invalidated: …`).
    case invalidated
    /// The store failed after an allowed decision, with the error's message (`store: …`).
    case storeFailure(String)
    /// Stored data failed its integrity check: the damage, in the store's words (a `tamper` record's text).
    case tampered(String)
    /// What an authentication attempt was asked to prove (`requirement: …`).
    case requirement(Requirement)
    /// How an authentication attempt ended (`outcome: …`).
    case outcome(AuthenticationOutcome)
    /// A factor locked out after too many failures (`passcode locked out: …`).
    case lockedOut(Factor, AuthenticationOutcome)
    /// What one organisation rule did in the decision (`organisationRule: rule 'x' forbids read`).
    case organisationRule(PolicyReason)
    /// Who held an authentication attempt's conversation, when not the requester: an
    /// authentication agent, by pid and program (`askedAgent: …`).
    case askedAgent(String)
    /// A requirement an organisation rule still needs proved (`needs …`).
    case needs(Requirement)
    /// An organisation grant that refused an access group (`organisationGrant: …`).
    case organisationGrant(String)
    /// A read of attributes only: the value was not decrypted (`attributesOnly: …`).
    case attributesOnly
    /// A policy reload failed; the rules in force were kept (`kept the N rules in force: …`).
    case policyKept(rules: Int, message: String)
    /// A policy reload succeeded (`N rules, M grants from …`). The paths are joined with `", "`:
    /// a path that itself holds `", "` reads back as two.
    case policyLoaded(rules: Int, grants: Int, paths: [String])
    /// The store's anchor was replaced by this trail, and why it no longer matched (`anchorRestarted: …`).
    case anchorRestarted(String)
    /// The trail's head was brought forward from `from` to `to` (`headRecovered: …`).
    case headRecovered(from: UInt64, to: UInt64)
    /// A partial record of `bytes` bytes past the head was cut off (`tornTailCut: …`).
    case tornTailCut(bytes: Int)
    /// `records` records the item store held past the trail's end (its last flush was lost,
    /// with a power loss) were written back from the store (`restoredFromStore: …`).
    case restoredFromStore(records: UInt64)
    /// A proof of `factor` from an earlier request counted here, reused within the request's
    /// `window` seconds: no authenticator ran for it in this request (`proofReused: …`). The
    /// broker remembers proofs per caller (uid, session, terminal); the embedded CLI keeps them
    /// in its proof records (`--reuse-seconds`). Added by ``AuditEvent`` for each proof it lists
    /// whose ``KeygatePolicy/Proof/origin`` is ``KeygatePolicy/Proof/Origin/reused(window:)``.
    case proofReused(Factor, window: Int)
    /// A use of a key: the algorithm and the SHA-256 of what was signed or agreed with, as
    /// lowercase hex, never the input itself (`keyUse: ecdsa-sha256 of input sha256 …`).
    case keyUse(algorithm: String, inputSHA256: String)
    /// Where a signature was for, as the requester's protocol names it: for the SSH agent, the
    /// destination's host key fingerprint from `session-bind@openssh.com`, and whether the
    /// session was forwarded (`destination: …`).
    case destination(String)
    /// A text this version does not read as any reason or note (a trail written by another
    /// version): kept verbatim so the trail still verifies, never acted on.
    case unrecognised(String)

    /// The kinds of note, one per case: what a test asserts (`because: .refused`) without spelling a string.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// ``AuditNote/refused(_:)``.
        case refused
        /// ``AuditNote/enrollment(bound:now:)``.
        case enrollment
        /// ``AuditNote/invalidated``.
        case invalidated
        /// ``AuditNote/storeFailure(_:)``.
        case storeFailure
        /// ``AuditNote/tampered(_:)``.
        case tampered
        /// ``AuditNote/requirement(_:)``.
        case requirement
        /// ``AuditNote/outcome(_:)``.
        case outcome
        /// ``AuditNote/lockedOut(_:_:)``.
        case lockedOut
        /// ``AuditNote/organisationRule(_:)``.
        case organisationRule
        /// ``AuditNote/askedAgent(_:)``.
        case askedAgent
        /// ``AuditNote/needs(_:)``.
        case needs
        /// ``AuditNote/organisationGrant(_:)``.
        case organisationGrant
        /// ``AuditNote/attributesOnly``.
        case attributesOnly
        /// ``AuditNote/policyKept(rules:message:)``.
        case policyKept
        /// ``AuditNote/policyLoaded(rules:grants:paths:)``.
        case policyLoaded
        /// ``AuditNote/anchorRestarted(_:)``.
        case anchorRestarted
        /// ``AuditNote/headRecovered(from:to:)``.
        case headRecovered
        /// ``AuditNote/tornTailCut(bytes:)``.
        case tornTailCut
        /// ``AuditNote/restoredFromStore(records:)``.
        case restoredFromStore
        /// ``AuditNote/proofReused(_:window:)``.
        case proofReused
        /// ``AuditNote/keyUse(algorithm:inputSHA256:)``.
        case keyUse
        /// ``AuditNote/destination(_:)``.
        case destination
        /// ``AuditNote/unrecognised(_:)``.
        case unrecognised
    }

    /// The kind of this note.
    public var kind: Code {
        switch self {
        case .refused: .refused
        case .enrollment: .enrollment
        case .invalidated: .invalidated
        case .storeFailure: .storeFailure
        case .tampered: .tampered
        case .requirement: .requirement
        case .outcome: .outcome
        case .lockedOut: .lockedOut
        case .organisationRule: .organisationRule
        case .askedAgent: .askedAgent
        case .needs: .needs
        case .organisationGrant: .organisationGrant
        case .attributesOnly: .attributesOnly
        case .policyKept: .policyKept
        case .policyLoaded: .policyLoaded
        case .anchorRestarted: .anchorRestarted
        case .headRecovered: .headRecovered
        case .tornTailCut: .tornTailCut
        case .restoredFromStore: .restoredFromStore
        case .proofReused: .proofReused
        case .keyUse: .keyUse
        case .destination: .destination
        case .unrecognised: .unrecognised
        }
    }

    /// True for a note whose text may name an item (an error message): when account names are
    /// redacted, the event's account is redacted in this note's text too.
    public var namesItem: Bool {
        switch self {
        case .refused, .storeFailure, .tampered, .outcome, .lockedOut, .unrecognised: true
        default: false
        }
    }
}

extension AuditNote: CustomStringConvertible {
    /// The note's text in a record's `reasons`.
    public var description: String {
        switch self {
        case .refused(let message): "refused: \(message)"
        case .enrollment(let bound, let now): "enrollment: bound to \(bound?.hex ?? "none"), now \(now?.hex ?? "none")"
        case .invalidated: "invalidated: the item no longer exists and is removed"
        case .storeFailure(let message): "store: \(message)"
        case .tampered(let message): message
        case .requirement(let requirement): "requirement: \(requirement)"
        case .outcome(let outcome): "outcome: \(outcome)"
        case .lockedOut(let factor, let outcome): "\(factor) locked out: \(outcome)"
        case .organisationRule(let reason): "organisationRule: \(reason)"
        case .askedAgent(let agent): "askedAgent: \(agent)"
        case .needs(let requirement): "needs \(requirement)"
        case .organisationGrant(let reason): "organisationGrant: \(reason)"
        case .attributesOnly: "attributesOnly: attributes only; the value is not read"
        case .policyKept(let rules, let message): "kept the \(rules) rules in force: \(message)"
        case .policyLoaded(let rules, let grants, let paths):
            "\(rules) rules, \(grants) grants from " + paths.joined(separator: ", ")
        case .anchorRestarted(let problem):
            "anchorRestarted: \(problem); this trail was accepted as it is by 'keygate audit repair --restart'"
        case .headRecovered(let from, let to):
            "headRecovered: the head was at record \(from); records \(from + 1)…\(to) chain from it "
                + "but were not in the head (a crash or a failed head write), so the head was moved to \(to)"
        case .tornTailCut(let bytes):
            "tornTailCut: a partial record of \(bytes) bytes past the head (a crash during a write) was cut off"
        case .restoredFromStore(let records):
            "restoredFromStore: \(records) records held in the item store past the trail's end (not flushed "
                + "before a power loss) were written back"
        case .proofReused(let factor, let window):
            "proofReused: the \(factor) proof of an earlier request, reused within this request's \(window) s window"
        case .keyUse(let algorithm, let digest): "keyUse: \(algorithm) of input sha256 \(digest)"
        case .destination(let destination): "destination: \(destination)"
        case .unrecognised(let text): text
        }
    }
}
