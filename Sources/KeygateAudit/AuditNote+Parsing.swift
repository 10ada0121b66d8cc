import KeygatePolicy

// Reading a note back from a record's line. A text is read as a note only when that note
// renders to exactly the text; anything else is kept as `.unrecognised(text)`, so a trail
// written by another version still parses and verifies (its hashes cover the bytes as written).

extension AuditNote {
    /// The note whose text is `text`, in a record of `kind`: a `tamper` record's text is the
    /// damage itself; a text no note renders to is ``unrecognised(_:)``.
    public init(text: String, kind: AuditEvent.Kind) {
        let note = Self.parse(text, kind: kind)
        self = note.map { $0.description == text ? $0 : .unrecognised(text) } ?? .unrecognised(text)
    }

    private static func parse(_ text: String, kind: AuditEvent.Kind) -> AuditNote? {
        func after(_ prefix: String) -> String? {
            text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : nil
        }
        if let message = after("refused: ") { return .refused(message) }
        if let rest = after("enrollment: bound to ") {
            let parts = rest.split(separator: ", now ", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            return .enrollment(bound: EnrollmentSetHash(hex: parts[0]), now: EnrollmentSetHash(hex: parts[1]))
        }
        if text == AuditNote.invalidated.description { return .invalidated }
        if text == AuditNote.attributesOnly.description { return .attributesOnly }
        if let message = after("store: ") { return .storeFailure(message) }
        if let requirement = after("requirement: ") {
            return Requirement(description: requirement).map { .requirement($0) }
        }
        if let outcome = after("outcome: ") { return Self.outcome(outcome).map { .outcome($0) } }
        if let agent = after("askedAgent: ") { return .askedAgent(agent) }
        if let use = after("keyUse: "), let split = use.ranges(of: " of input sha256 ").last {
            return .keyUse(algorithm: String(use[..<split.lowerBound]), inputSHA256: String(use[split.upperBound...]))
        }
        if let destination = after("destination: ") { return .destination(destination) }
        if let reason = after("organisationRule: ") {
            return PolicyReason(description: reason).map { .organisationRule($0) }
        }
        if let requirement = after("needs ") { return Requirement(description: requirement).map { .needs($0) } }
        if let reason = after("organisationGrant: ") { return .organisationGrant(reason) }
        if let rest = after("kept the "), let end = rest.firstRange(of: " rules in force: "),
            let rules = Int(rest[..<end.lowerBound])
        {
            return .policyKept(rules: rules, message: String(rest[end.upperBound...]))
        }
        if let rest = after("anchorRestarted: "),
            let end = rest.ranges(of: "; this trail was accepted as it is by").last
        {
            return .anchorRestarted(String(rest[..<end.lowerBound]))
        }
        let numbers = text.split(whereSeparator: { !$0.isASCII || !$0.isNumber }).compactMap { UInt64($0) }
        if text.hasPrefix("headRecovered: "), numbers.count == 4 {
            return .headRecovered(from: numbers[0], to: numbers[3])
        }
        if text.hasPrefix("tornTailCut: "), let bytes = numbers.first {
            return .tornTailCut(bytes: Int(bytes))
        }
        if text.hasPrefix("restoredFromStore: "), let records = numbers.first {
            return .restoredFromStore(records: records)
        }
        if let rest = after("proofReused: the "), let window = numbers.first,
            let factor = Factor.allCases.first(where: { rest.hasPrefix("\($0) proof of") })
        {
            return .proofReused(factor, window: Int(window))
        }
        for factor in Factor.allCases {
            if let outcome = after("\(factor) locked out: ") {
                return Self.outcome(outcome).map { .lockedOut(factor, $0) }
            }
        }
        if let from = text.firstRange(of: " grants from "), numbers.count >= 2 {
            let paths = text[from.upperBound...].split(separator: ", ", omittingEmptySubsequences: false)
            return .policyLoaded(rules: Int(numbers[0]), grants: Int(numbers[1]), paths: paths.map(String.init))
        }
        return kind == .tamper ? .tampered(text) : nil
    }

    /// An authentication outcome from its text (``KeygatePolicy/AuthenticationOutcome/description``).
    private static func outcome(_ text: String) -> AuthenticationOutcome? {
        if text == "cancelled by the user" { return .cancelled }
        if text.hasPrefix("unavailable: ") { return .unavailable(String(text.dropFirst("unavailable: ".count))) }
        if text.hasPrefix("not allowed: ") { return .notAllowed(String(text.dropFirst("not allowed: ".count))) }
        if text.hasPrefix("proved ") {
            return FactorSet(description: text.dropFirst("proved ".count)).map { .proved($0) }
        }
        for factor in Factor.allCases {
            if text.hasPrefix("\(factor) failed: ") {
                return .failed(factor, message: String(text.dropFirst("\(factor) failed: ".count)))
            }
            let lockout = "\(factor) is locked out after too many failures"
            if text == lockout { return .lockedOut(factor, until: nil) }
            if text.hasPrefix(lockout + " until "), let seconds = Double(text.dropFirst(lockout.count + 7)) {
                return .lockedOut(factor, until: Timestamp(nanoseconds: Int64((seconds * 1e9).rounded())))
            }
        }
        return nil
    }
}
