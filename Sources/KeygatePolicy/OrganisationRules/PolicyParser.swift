/// The hand-written parser of the `.policy` language (grammar in `Policies/README.md`).
///
/// ```swift
/// let document = try PolicyParser.parse(#"rule "r" { match service "com.example.*" on read require fresh 30s }"#,
///                                       file: "bank.policy")
/// ```
/// Every problem is a ``PolicyParseError`` at a line and column naming the token found and
/// what was expected. Besides syntax, these are errors, never warnings: an unknown flag or
/// class in `require at-least`, an at-least no access control can satisfy, a freshness bound
/// over 300 s, an empty pattern. (Duplicate rule names are found by ``PolicySet``, which sees
/// every file.)
public enum PolicyParser {
    /// The longest freshness bound a rule may set: Apple's maximum reuse window.
    public static let maximumFreshSeconds = AuthenticationState.maximumReuseSeconds

    /// Parses one file's text.
    /// - Parameters:
    ///   - text: the file's contents.
    ///   - file: the name used in locations and errors.
    /// - Throws: ``PolicyParseError`` for the first problem.
    public static func parse(_ text: String, file: String) throws(PolicyParseError) -> PolicyDocument {
        var lexer = PolicyLexer(text, file: file)
        var state = State(tokens: try lexer.tokens(), file: file)
        return try state.document()
    }

    /// Parses the text of a `require at-least` string: an optional protection class and flag
    /// names, separated by spaces or commas, with `or` / `and` (`"whenUnlockedThisDeviceOnly
    /// biometryCurrentSet or devicePasscode"`).
    /// - Throws: a ``PolicyParseError`` whose location is the offending word, computed from `start`
    ///   (the location of the string's opening quote).
    public static func parseMinimum(_ text: String, at start: SourceLocation) throws(PolicyParseError) -> PolicyEffect {
        var protection: ProtectionClass?
        var flags = AccessControlFlags()
        var offset = 0
        var word = ""
        var wordStart = 0
        func finish() throws(PolicyParseError) {
            defer { word = "" }
            guard !word.isEmpty else { return }
            let location = SourceLocation(file: start.file, line: start.line, column: start.column + 1 + wordStart)
            if let flag = AccessControlFlags.flag(named: word) {
                flags.formUnion(flag)
            } else if let found = ProtectionClass.allCases.first(where: { $0.name == word }) {
                if let protection {
                    throw PolicyParseError(
                        location, "a second protection class '\(word)' after '\(protection.name)' in require at-least")
                }
                protection = found
            } else {
                throw PolicyParseError(
                    location,
                    "unknown access-control flag or class '\(word)' in require at-least (expected one of: "
                        + AccessControlFlags.named.map(\.name).joined(separator: ", ") + ", or a protection class)")
            }
        }
        for scalar in text.unicodeScalars {
            if scalar == " " || scalar == "," || scalar == "\t" {
                try finish()
            } else {
                if word.isEmpty { wordStart = offset }
                word.unicodeScalars.append(scalar)
            }
            offset += 1
        }
        try finish()
        let effect = PolicyEffect.atLeast(protection: protection, flags: flags)
        do throws(KeygateError) {
            _ = try StrengthAnalysis.minimum(of: effect)
        } catch {
            throw PolicyParseError(
                start, "no access control can satisfy require at-least \"\(text)\": \(error.message)")
        }
        guard StrengthAnalysis.isSatisfiable(effect) else {
            throw PolicyParseError(
                start, "no access control can satisfy require at-least \"\(text)\": no item could be added with it")
        }
        return effect
    }

    // MARK: - Recursive descent

    private struct State {
        let tokens: [PolicyToken]
        let file: String
        var position = 0

        init(tokens: [PolicyToken], file: String) {
            self.tokens = tokens
            self.file = file
        }

        var current: PolicyToken { tokens[position] }

        func location(_ token: PolicyToken) -> SourceLocation {
            SourceLocation(file: file, line: token.line, column: token.column)
        }

        func expected(_ what: String) -> PolicyParseError {
            PolicyParseError(location(current), "expected \(what), found \(current.shown)")
        }

        mutating func take() -> PolicyToken {
            let token = tokens[position]
            if token.kind != .end { position += 1 }
            return token
        }

        func isWord(_ text: String) -> Bool { current.kind == .word && current.text == text }
        func isSymbol(_ text: String) -> Bool { current.kind == .symbol && current.text == text }

        mutating func expectWord(_ text: String) throws(PolicyParseError) {
            guard isWord(text) else { throw expected("'\(text)'") }
            position += 1
        }

        mutating func expectSymbol(_ text: String) throws(PolicyParseError) {
            guard isSymbol(text) else { throw expected("'\(text)'") }
            position += 1
        }

        mutating func string(_ what: String) throws(PolicyParseError) -> (String, PolicyToken) {
            guard current.kind == .string else { throw expected("\(what) (a quoted string)") }
            let token = take()
            return (token.text, token)
        }

        mutating func document() throws(PolicyParseError) -> PolicyDocument {
            var document = PolicyDocument()
            while current.kind != .end {
                if isWord("rule") {
                    document.rules.append(try rule())
                } else if isWord("grant") {
                    document.grants.append(try grant())
                } else {
                    throw expected("'rule' or 'grant'")
                }
            }
            return document
        }

        mutating func rule() throws(PolicyParseError) -> PolicyRule {
            let start = take()
            let (name, nameToken) = try string("a rule name")
            guard !name.isEmpty else { throw PolicyParseError(location(nameToken), "a rule name cannot be empty") }
            try expectSymbol("{")
            var rule = PolicyRule(name: name, location: location(start))
            while !isSymbol("}") {
                if isWord("match") {
                    rule.selectors.append(try selector())
                } else if isWord("on") {
                    let clauseStart = take()
                    let actions = try actions()
                    rule.clauses.append(
                        PolicyClause(actions: actions, effect: try effect(), location: location(clauseStart)))
                } else if isWord("forbid") {
                    let clauseStart = take()
                    rule.clauses.append(
                        PolicyClause(actions: try actions(), effect: .forbid, location: location(clauseStart)))
                } else {
                    throw expected("'match', 'on', 'forbid' or '}'")
                }
            }
            position += 1
            return rule
        }

        mutating func selector() throws(PolicyParseError) -> PolicySelector {
            position += 1  // match
            guard current.kind == .word, let field = PolicySelector.Field(rawValue: current.text) else {
                throw expected(
                    "a field (" + PolicySelector.Field.allCases.map(\.rawValue).joined(separator: ", ") + ")")
            }
            position += 1
            var patterns: [String] = []
            repeat {
                guard current.kind == .string else {
                    throw PolicyParseError(
                        location(current),
                        patterns.isEmpty
                            ? "empty selector: 'match \(field.rawValue)' needs a quoted pattern, found \(current.shown)"
                            : "expected a quoted pattern after ',', found \(current.shown)")
                }
                let token = take()
                guard !token.text.isEmpty else {
                    throw PolicyParseError(location(token), "empty selector: the pattern for \(field.rawValue) is \"\"")
                }
                patterns.append(token.text)
            } while consumeComma()
            return PolicySelector(field: field, patterns: patterns)
        }

        mutating func consumeComma() -> Bool {
            guard isSymbol(",") else { return false }
            position += 1
            return true
        }

        mutating func actions() throws(PolicyParseError) -> [PolicyAction] {
            var actions: [PolicyAction] = []
            repeat {
                guard current.kind == .word, let action = PolicyAction(rawValue: current.text) else {
                    throw expected(
                        "an operation (" + PolicyAction.allCases.map(\.rawValue).joined(separator: ", ") + ")")
                }
                position += 1
                if !actions.contains(action) { actions.append(action) }
            } while consumeComma()
            return actions
        }

        mutating func effect() throws(PolicyParseError) -> PolicyEffect {
            if isWord("forbid") {
                position += 1
                return .forbid
            }
            try expectWord("require")
            if isWord("at-least") {
                position += 1
                let (text, token) = try string("the minimum access control")
                return try PolicyParser.parseMinimum(text, at: location(token))
            }
            if isWord("fresh") {
                position += 1
                return .fresh(seconds: try duration())
            }
            var alternatives: [FactorSet] = []
            repeat {
                var set = FactorSet()
                repeat {
                    guard current.kind == .word, let factor = Factor(rawValue: current.text),
                        factor != .applicationPassword
                    else {
                        throw expected("'at-least', 'fresh' or a factor (passcode, biometry, companion)")
                    }
                    position += 1
                    set.insert(FactorSet(factor))
                } while consumePlus()
                alternatives.append(set)
            } while consumeOr()
            guard alternatives.count <= Requirement.capacity else {
                throw PolicyParseError(
                    location(current), "at most \(Requirement.capacity) alternatives may be required")
            }
            return .factors(Requirement(alternatives))
        }

        mutating func consumePlus() -> Bool {
            guard isSymbol("+") else { return false }
            position += 1
            return true
        }

        mutating func consumeOr() -> Bool {
            guard isWord("or") else { return false }
            position += 1
            return true
        }

        mutating func duration() throws(PolicyParseError) -> Int {
            let token = current
            guard token.kind == .word, let unit = token.text.last, unit == "s" || unit == "m",
                token.text.count >= 2, token.text.dropLast().allSatisfy(\.isASCIIDigit),
                let amount = Int(token.text.dropLast())
            else { throw expected("a duration such as 30s or 2m") }
            position += 1
            let seconds = unit == "m" ? amount.multipliedReportingOverflow(by: 60).partialValue : amount
            guard seconds <= PolicyParser.maximumFreshSeconds, amount <= 1_000_000 else {
                throw PolicyParseError(
                    location(token),
                    "freshness bound \(token.text) is over \(PolicyParser.maximumFreshSeconds)s, the longest reuse window"
                )
            }
            return seconds
        }

        mutating func grant() throws(PolicyParseError) -> PolicyGrant {
            let start = take()
            try expectWord("access-group")
            let (group, groupToken) = try string("an access group")
            guard !group.isEmpty else {
                throw PolicyParseError(location(groupToken), "empty selector: the access group is \"\"")
            }
            try expectWord("to")
            try expectWord("program")
            var programs: [String] = []
            repeat {
                let (program, token) = try string("a program path")
                guard !program.isEmpty else {
                    throw PolicyParseError(location(token), "empty selector: the program is \"\"")
                }
                programs.append(program)
            } while consumeComma()
            return PolicyGrant(accessGroup: group, programs: programs, location: location(start))
        }
    }
}
