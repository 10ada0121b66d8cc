import KeygatePolicy
import Testing

@Suite struct PolicyParserTests {
    static let example = """
        # Organisation rules for the bank app.
        rule "bank-tokens" {
          match service "com.example.bank.*"
          on add, update   require at-least "biometryCurrentSet or devicePasscode"
          on read          require fresh 30s
        }
        rule "no-export-of-recovery" { match access-group "recovery"  forbid export }
        rule "delete-needs-passcode" { match account "admin", "root" on delete require passcode }
        grant access-group "com.example.app" to program "/usr/bin/example-app"  // only this one
        """

    @Test func parsesTheIssueExample() throws {
        let document = try PolicyParser.parse(Self.example, file: "bank.policy")
        #expect(document.rules.map(\.name) == ["bank-tokens", "no-export-of-recovery", "delete-needs-passcode"])
        let bank = document.rules[0]
        #expect(bank.location == SourceLocation(file: "bank.policy", line: 2, column: 1))
        #expect(bank.selectors == [PolicySelector(field: .service, patterns: ["com.example.bank.*"])])
        #expect(bank.clauses.map(\.actions) == [[.add, .update], [.read]])
        #expect(
            bank.clauses[0].effect == .atLeast(protection: nil, flags: [.biometryCurrentSet, .or, .devicePasscode]))
        #expect(bank.clauses[1].effect == .fresh(seconds: 30))
        #expect(
            document.rules[1].clauses == [
                PolicyClause(actions: [.export], effect: .forbid, location: document.rules[1].clauses[0].location)
            ])
        #expect(document.rules[2].selectors[0].patterns == ["admin", "root"])
        #expect(document.rules[2].clauses[0].effect == .factors(Requirement([.passcode])))
        #expect(
            document.grants == [
                PolicyGrant(
                    accessGroup: "com.example.app", programs: ["/usr/bin/example-app"],
                    location: SourceLocation(file: "bank.policy", line: 9, column: 1))
            ])
    }

    @Test func parsesClassesFactorsAndMinutes() throws {
        let document = try PolicyParser.parse(
            """
            rule "r" {
              match class "*ThisDeviceOnly"
              on add require at-least "whenUnlockedThisDeviceOnly, userPresence"
              on read require biometry + passcode or companion
              on update require fresh 2m
            }
            """, file: "f")
        let clauses = document.rules[0].clauses
        #expect(clauses[0].effect == .atLeast(protection: .whenUnlockedThisDeviceOnly, flags: .userPresence))
        #expect(clauses[1].effect == .factors(Requirement([[.biometry, .passcode], .companion])))
        #expect(clauses[2].effect == .fresh(seconds: 120))
    }

    /// Every error class: the message and the position.
    @Test(arguments: [
        // Syntax: the token found and what was expected.
        (
            "rule \"a\" { match servce \"x\" }",
            "f:1:18: expected a field (service, account, access-group, label, program, class), found 'servce'"
        ),
        (
            "rule \"a\" {\n  on raed forbid\n}",
            "f:2:6: expected an operation (add, read, update, delete, export, import, list, sign, computeKey), found 'raed'"
        ),
        ("rule \"a\" { on read }", "f:1:20: expected 'require', found '}'"),
        ("rule a {}", "f:1:6: expected a rule name (a quoted string), found 'a'"),
        ("polcy \"a\" {}", "f:1:1: expected 'rule' or 'grant', found 'polcy'"),
        ("rule \"a\" { match service \"x\"", "f:1:29: expected 'match', 'on', 'forbid' or '}', found end of file"),
        ("rule \"a\" { match service \"x }", "f:1:26: unterminated string: expected '\"' before the end of the line"),
        ("grant access-group \"g\" program \"/p\"", "f:1:24: expected 'to', found 'program'"),
        ("rule \"a\" { on read require fresh soon }", "f:1:34: expected a duration such as 30s or 2m, found 'soon'"),
        (
            "rule \"a\" { on read require pin }",
            "f:1:28: expected 'at-least', 'fresh' or a factor (passcode, biometry, companion), found 'pin'"
        ),
        // Unknown flags: the position of the word inside the string.
        (
            "rule \"a\" {\n  on add require at-least \"biometryAny or faceID\"\n}",
            "f:2:43: unknown access-control flag or class 'faceID' in require at-least (expected one of: userPresence, biometryAny, biometryCurrentSet, devicePasscode, companion, or, and, privateKeyUsage, applicationPassword, or a protection class)"
        ),
        // Empty selectors.
        ("rule \"a\" { match service \"\" forbid read }", "f:1:26: empty selector: the pattern for service is \"\""),
        (
            "rule \"a\" { match account forbid read }",
            "f:1:26: empty selector: 'match account' needs a quoted pattern, found 'forbid'"
        ),
        ("grant access-group \"\" to program \"/p\"", "f:1:20: empty selector: the access group is \"\""),
        // An at-least nothing can satisfy.
        (
            "rule \"a\" { on add require at-least \"userPresence and devicePasscode\" }",
            "f:1:36: no access control can satisfy require at-least \"userPresence and devicePasscode\": 'userPresence' cannot be combined with devicePasscode,and"
        ),
        (
            "rule \"a\" { on add require at-least \"privateKeyUsage\" }",
            "f:1:36: no access control can satisfy require at-least \"privateKeyUsage\": no item could be added with it"
        ),
        // A freshness bound over 300 s.
        (
            "rule \"a\" { on read require fresh 301s }",
            "f:1:34: freshness bound 301s is over 300s, the longest reuse window"
        ),
        (
            "rule \"a\" { on read require fresh 6m }",
            "f:1:34: freshness bound 6m is over 300s, the longest reuse window"
        ),
    ])
    func reportsErrorsWithPosition(text: String, expected: String) {
        #expect(throws: PolicyParseError.self) { try PolicyParser.parse(text, file: "f") }
        do {
            _ = try PolicyParser.parse(text, file: "f")
        } catch {
            #expect(error.description == expected)
        }
    }

    @Test func duplicateRuleNamesAcrossFilesAreErrors() {
        do {
            _ = try PolicySet(files: [
                ("a.policy", "rule \"same\" { forbid export }"),
                ("b.policy", "\n  rule \"same\" { forbid import }"),
            ])
            Issue.record("a duplicate rule name was accepted")
        } catch {
            #expect(error.description == "b.policy:2:3: duplicate rule name 'same', first defined at a.policy:1:1")
        }
    }

    @Test func jsonDocumentsAreValidatedToo() {
        let document = PolicyDocument(rules: [
            PolicyRule(name: "r", clauses: [PolicyClause(actions: [.read], effect: .fresh(seconds: 900))])
        ])
        #expect(throws: PolicyParseError.self) { try PolicySet(document: document) }
        let empty = PolicyDocument(rules: [
            PolicyRule(name: "e", selectors: [PolicySelector(field: .service, patterns: [])])
        ])
        #expect(
            PolicyValidator.validate(empty).errors.map(\.message) == ["empty selector: rule 'e' matches service \"\""])
    }

    @Test func lintWarnsWhenARuleAsksForLessThanAnotherOnTheSameItems() throws {
        let document = try PolicyParser.parse(
            """
            rule "everything" { on add require at-least "whenUnlocked devicePasscode" }
            rule "bank" { match service "bank.*" on add require at-least "afterFirstUnlock" }
            rule "fine" { match service "bank.*" on add require at-least "whenUnlockedThisDeviceOnly devicePasscode" }
            """, file: "lint.policy")
        let result = PolicyValidator.validate(document)
        #expect(result.errors.isEmpty)
        #expect(
            result.warnings.map(\.description) == [
                "lint.policy:2:1: rule 'bank' asks for less on add than rule 'everything', which applies to the same items: its minimum never decides"
            ])
    }
}
