// Reading a reason back from its text (``DecisionReason/description``), as an audit trail
// holds it. A text is accepted only when the reason found renders to exactly that text.

extension DecisionReason {
    /// The reason whose ``description`` is `text`, or nil when no reason renders to it.
    ///
    /// One text can stand for several values only where the text leaves a payload out: a
    /// proof dated in the future (`factorStale`) keeps neither its age nor the reuse window,
    /// and reads back as `secondsAgo: -1, reuseSeconds: 0`.
    public init?(description text: String) {
        guard let colon = text.firstIndex(of: ":"), let kind = Code(rawValue: String(text[..<colon])) else {
            return nil
        }
        guard
            let reason = Self.candidates(kind, numbers: Self.integers(in: text)).first(where: { $0.description == text }
            )
        else { return nil }
        self = reason
    }

    /// Every reason of `kind` whose numbers, if any, are among `numbers` (in order).
    private static func candidates(_ kind: Code, numbers: [Int32]) -> [DecisionReason] {
        let first = numbers.first ?? 0
        let second = numbers.dropFirst().first ?? 0
        switch kind {
        case .noConstraint: return [.noConstraint]
        case .operationNeedsNoAuthentication: return Operation.allCases.map { .operationNeedsNoAuthentication($0) }
        case .classAvailable: return ProtectionClass.allCases.map { .classAvailable($0) }
        case .classUnavailable:
            return ProtectionClass.allCases.flatMap { protection in
                ClassUnavailability.allCases.map { .classUnavailable(protection, $0) }
            }
        case .deprecatedClass: return ProtectionClass.allCases.map { .deprecatedClass($0) }
        case .privateKeyUsage: return [.privateKeyUsage]
        case .operationNotGranted: return Operation.allCases.map { .operationNotGranted($0) }
        case .passcodeRemoved: return [.passcodeRemoved]
        case .enrollmentChanged: return [.enrollmentChanged]
        case .notBound: return [.notBound]
        case .boundToEnrollment: return [.boundToEnrollment]
        case .factorProved: return Factor.allCases.map { .factorProved($0, secondsAgo: first) }
        case .factorMissing: return Factor.allCases.map { .factorMissing($0) }
        case .factorStale:
            return Factor.allCases.flatMap { factor in
                [
                    .factorStale(factor, secondsAgo: first, reuseSeconds: second),
                    .factorStale(factor, secondsAgo: -1, reuseSeconds: 0),
                ]
            }
        case .proofForOtherEnrollment: return [.proofForOtherEnrollment]
        case .factorUnavailable:
            return Factor.allCases.flatMap { factor in Unavailability.allCases.map { .factorUnavailable(factor, $0) } }
        case .thresholdMet:
            guard let satisfied = Int8(exactly: first), let required = Int8(exactly: second) else { return [] }
            return [.thresholdMet(satisfied: satisfied, required: required)]
        case .thresholdUnreachable:
            guard let possible = Int8(exactly: first), let required = Int8(exactly: second) else { return [] }
            return [.thresholdUnreachable(possible: possible, required: required)]
        case .interactionNotAllowed: return InteractionPolicy.allCases.map { .interactionNotAllowed($0) }
        case .skipOutsideRead: return Operation.allCases.map { .skipOutsideRead($0) }
        case .contextInvalidated: return [.contextInvalidated]
        case .internalFailure: return [.internalFailure]
        }
    }

    /// The whole numbers in `text` that fit an `Int32`, in order (a leading `-` counts).
    private static func integers(in text: String) -> [Int32] {
        var found: [Int32] = []
        var digits = ""
        var previous: Character = " "
        for character in text + " " {
            if character.isASCII, character.isNumber || character == "-" && digits.isEmpty && !previous.isLetter {
                digits.append(character)
            } else if !digits.isEmpty {
                if let number = Int32(digits) { found.append(number) }
                digits = ""
            }
            previous = character
        }
        return found
    }
}
