// Reading a requirement back from its text (``Requirement/description``), as a decision's
// JSON form and an audit record hold it.

extension Requirement {
    /// The requirement whose ``description`` is `text` (`biometry | (passcode + companion)`),
    /// or nil when no requirement renders to it.
    public init?(description text: String) {
        var alternatives: [FactorSet] = []
        if text != "nothing possible" {
            for alternative in text.split(separator: " | ", omittingEmptySubsequences: false) {
                let bare =
                    alternative.hasPrefix("(") && alternative.hasSuffix(")")
                    ? alternative.dropFirst().dropLast() : alternative[...]
                guard let factors = FactorSet(description: bare) else { return nil }
                alternatives.append(factors)
            }
        }
        let requirement = Requirement(alternatives)
        guard requirement.description == text else { return nil }
        self = requirement
    }
}

extension FactorSet {
    /// The set whose ``description`` is `text` (`passcode + biometry`), or nil when no set renders to it.
    public init?(description text: some StringProtocol) {
        var factors = FactorSet()
        if text != "none" {
            for name in text.split(separator: " + ", omittingEmptySubsequences: false) {
                guard let factor = Factor(rawValue: String(name)) else { return nil }
                factors.insert(FactorSet(factor))
            }
        }
        guard factors.description == text else { return nil }
        self = factors
    }
}
