/// Writes a policy document back as `.policy` text that parses to the same document
/// (locations aside).
public enum PolicyPrinter {
    /// The canonical text of `document`.
    public static func text(_ document: PolicyDocument) -> String {
        var out = ""
        for rule in document.rules {
            out += "rule \(quoted(rule.name)) {\n"
            for selector in rule.selectors {
                out +=
                    "  match \(selector.field.rawValue) " + selector.patterns.map(quoted).joined(separator: ", ") + "\n"
            }
            for clause in rule.clauses {
                let actions = clause.actions.map(\.rawValue).joined(separator: ", ")
                out += "  on \(actions) \(effectText(clause.effect))\n"
            }
            out += "}\n"
        }
        for grant in document.grants {
            out +=
                "grant access-group \(quoted(grant.accessGroup)) to program "
                + grant.programs.map(quoted).joined(separator: ", ") + "\n"
        }
        return out
    }

    /// The text of an effect: `forbid`, `require fresh 30s`, `require at-least "…"`, `require passcode`.
    public static func effectText(_ effect: PolicyEffect) -> String {
        switch effect {
        case .forbid: "forbid"
        case .fresh(let seconds): "require fresh \(seconds)s"
        case .atLeast: "require at-least \(quoted(minimumText(effect)))"
        case .factors(let requirement):
            "require "
                + requirement.alternatives.map { $0.factors.map(\.rawValue).joined(separator: " + ") }
                .joined(separator: " or ")
        }
    }

    /// The string of a `require at-least` effect: the class (if any), then the flag names.
    public static func minimumText(_ effect: PolicyEffect) -> String {
        guard case .atLeast(let protection, let flags) = effect else { return "" }
        return ((protection.map { [$0.name] } ?? []) + flags.names).joined(separator: " ")
    }

    /// An access control in the same words: its class and canonical flags.
    public static func minimumText(of control: AccessControl) -> String {
        ([control.protection.name] + control.flags.names).joined(separator: " ")
    }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { out += "\\" }
            out.unicodeScalars.append(scalar)
        }
        return out + "\""
    }
}

extension PolicyDocument {
    /// The same document with every location removed (to compare documents from different sources).
    public func strippingLocations() -> PolicyDocument {
        PolicyDocument(
            rules: rules.map { rule in
                PolicyRule(
                    name: rule.name, selectors: rule.selectors,
                    clauses: rule.clauses.map { PolicyClause(actions: $0.actions, effect: $0.effect) })
            },
            grants: grants.map { PolicyGrant(accessGroup: $0.accessGroup, programs: $0.programs) })
    }
}
