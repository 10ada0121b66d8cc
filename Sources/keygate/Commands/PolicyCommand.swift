import FoundationEssentials
import Glibc
import Keygate
import KeygateLinux
import KeygatePolicy

/// `keygate policy check|explain|test`: organisation policies in CI and at a desk.
enum PolicyCommand {
    static let help = """
        usage: keygate policy check [PATH…]
               keygate policy explain --service S --account A --operation OP [--program P]
                                      [--access-group G] [--label L] [--access-control FLAGS]
                                      [--accessible CLASS] [--context FILE.json]
               keygate policy test FILE.json…

        check    parses, validates and lints the policies of each PATH (default: the global
                 --policies, else /etc/keygate/policies and $XDG_CONFIG_HOME/keygate/policies);
                 warnings go to standard error; exit 0 when usable, 2 naming file:line:column.
        explain  prints, as one JSON object, which rules match the situation, which decided,
                 and the combined requirement (with --context, the item's own access control is
                 evaluated too, under the rules' freshness bound). OP is add, read, update,
                 delete, export, import or list. Exit 0 for any decision.
        test     runs policy test files (cases with expected decisions and deciding rules);
                 exit 0 when every case passes, 1 when one fails, 2 for a broken file.

        \(Arguments.helpLines(explainOptions))
        """

    static let explainOptions: [Arguments.Option] = [
        .init(name: "service", short: "s", value: "S", help: "the item's service"),
        .init(name: "account", short: "a", value: "A", help: "the item's account"),
        .init(name: "operation", value: "OP", help: "add, read, update, delete, export, import or list"),
        .init(name: "program", value: "PATH", help: "the calling program (default: unknown)"),
        .init(name: "access-group", short: "g", value: "G", help: "the item's access group (default: keygate)"),
        .init(name: "label", value: "L", help: "the item's label"),
        .init(name: "access-control", value: "FLAGS", help: "the item's flags, e.g. biometryAny,devicePasscode,or"),
        .init(name: "accessible", value: "CLASS", help: "the item's protection class"),
        .init(name: "context", value: "FILE", help: "a context file (as for evaluate)"),
    ]

    @Sendable static func run(_ global: GlobalOptions, _ words: ArraySlice<String>) async -> ExitStatus {
        guard let sub = words.first else {
            return KeygateCommand.fail(usage: Arguments.UsageError(message: "missing policy command"), help: help)
        }
        if sub == "--help" || sub == "-h" {
            Console.out(help)
            return .success
        }
        switch sub {
        case "check": return check(global, words.dropFirst())
        case "explain": return explain(global, words.dropFirst())
        case "test": return test(words.dropFirst())
        default:
            return KeygateCommand.fail(
                usage: Arguments.UsageError(message: "unknown policy command '\(sub)'"), help: help)
        }
    }

    // MARK: - check

    static func check(_ global: GlobalOptions, _ words: ArraySlice<String>) -> ExitStatus {
        let arguments: Arguments
        do throws(Arguments.UsageError) {
            arguments = try Arguments(words, options: [])
        } catch {
            return KeygateCommand.fail(usage: error, help: help)
        }
        if arguments.wantsHelp {
            Console.out(help)
            return .success
        }
        let paths =
            arguments.positionals.isEmpty ? global.policyPaths() : arguments.positionals.map(GlobalOptions.absolute)
        do throws(KeygateError) {
            let set = try PolicyDirectory.load(paths)
            for warning in PolicyDirectory.warnings(set) { Console.err("keygate: warning: \(warning)") }
            Console.out(
                "ok: \(set.ruleCount) rule\(set.ruleCount == 1 ? "" : "s"), \(set.document.grants.count) grant"
                    + "\(set.document.grants.count == 1 ? "" : "s") in " + paths.joined(separator: ", "))
            return .success
        } catch {
            Console.err("keygate: \(error.description)")
            return .usage
        }
    }

    // MARK: - explain

    static func explain(_ global: GlobalOptions, _ words: ArraySlice<String>) -> ExitStatus {
        let arguments: Arguments
        let action: PolicyAction
        do throws(Arguments.UsageError) {
            arguments = try Arguments(words, options: explainOptions)
            if arguments.wantsHelp {
                Console.out(help)
                return .success
            }
            try arguments.expectNoPositionals()
            let operation = try arguments.required("operation")
            guard let parsed = PolicyAction(rawValue: operation) else {
                throw Arguments.UsageError(message: "unknown operation '\(operation)'")
            }
            action = parsed
            _ = try arguments.required("service")
            _ = try arguments.required("account")
        } catch {
            return KeygateCommand.fail(usage: error, help: help)
        }
        let set: PolicySet
        do throws(KeygateError) {
            set = try global.loadPolicies()
        } catch {
            Console.err("keygate: \(error.description)")
            return .usage
        }
        var control: AccessControl?
        do throws(KeygateError) {
            if arguments.values["access-control"] != nil || arguments.values["accessible"] != nil {
                let protection = try arguments.values["accessible"].map { (text: String) throws(KeygateError) in
                    try ProtectionClass(parsing: text)
                }
                let flags =
                    try arguments.values["access-control"].map { (text: String) throws(KeygateError) in
                        try AccessControlFlags(parsing: text)
                    } ?? []
                control = try AccessControl(protection: protection ?? .default, flags: flags)
            }
        } catch {
            return KeygateCommand.fail(error)
        }
        let group = arguments.values["access-group"] ?? Session.defaultGroup
        let program = arguments.values["program"]
        let decision = set.decide(
            PolicyRequest(
                action: action, service: arguments.values["service"] ?? "", account: arguments.values["account"] ?? "",
                accessGroup: group, label: arguments.values["label"], program: program, accessControl: control))
        let entitlement = set.entitlement(program: program, accessGroup: group)
        var members: [JSONMember] = []
        let denied = decision.isDenied || !entitlement.isAllowed
        let status: KeygateStatus? =
            if !entitlement.isAllowed {
                .missingEntitlement
            } else if case .deny(let status) = decision.outcome {
                status
            } else {
                nil
            }
        members.append(JSONMember("decision", .string(denied ? "deny" : "allow")))
        members.append(JSONMember("status", status.map { .number(String($0.rawValue)) } ?? .null))
        members.append(JSONMember("statusName", status.flatMap { $0.name.map { .string($0) } } ?? .null))
        members.append(JSONMember("matchedRules", .array(decision.matchedRules.map { JSONNode(.string($0)) })))
        let deciding = entitlement.isAllowed ? decision.decidingRules : entitlement.ruleIDs
        members.append(JSONMember("decidingRules", .array(deciding.map { JSONNode(.string($0)) })))
        members.append(
            JSONMember(
                "requirements",
                .array(decision.requirements.map { JSONNode(.string("\($0.requirement)")) })))
        members.append(JSONMember("freshWithin", decision.freshWithin.map { .number(String($0)) } ?? .null))
        var combined = decision.requirements.map { "\($0.requirement)" }
        if let path = arguments.values["context"] {
            let context: ContextFile
            do throws(InputFileError) {
                guard let data = FileManager.default.contents(atPath: path),
                    let text = String(data: data, encoding: .utf8)
                else {
                    throw InputFileError(file: path, line: 0, column: 0, field: "", problem: "cannot read the file")
                }
                context = try ContextFile(parsing: text, file: path)
            } catch {
                return KeygateCommand.fail(error)
            }
            var state = context.state
            if let bound = decision.freshWithin { state.setReuseSeconds(min(state.reuseSeconds, bound)) }
            let operation: KeygatePolicy.Operation =
                switch action {
                case .add, .import: .add
                case .update: .update
                case .delete: .delete
                case .read, .export, .list: .read
                }
            let item =
                control ?? (try? AccessControl(protection: .default)) ?? AccessControl(unsatisfiableWith: .default)
            let own = Evaluator().evaluate(
                item, operation: action == .list ? .delete : operation, state: state, now: context.now)
            members.append(JSONMember("item", own.report))
            if case .authenticate(let requirement) = own.outcome { combined.insert("\(requirement)", at: 0) }
            let fresh = state.freshFactors(at: context.now)
            combined = combined.filter { text in
                !decision.requirements.contains { "\($0.requirement)" == text && $0.requirement.isSatisfied(by: fresh) }
            }
        }
        members.append(JSONMember("combinedRequirement", .array(combined.map { JSONNode(.string($0)) })))
        let lines = entitlement.isAllowed ? decision.explanation : [entitlement.explanation] + decision.explanation
        members.append(
            JSONMember(
                "explanation",
                .array(
                    (lines.isEmpty ? ["no rule applies: the item's own access control alone"] : lines).map {
                        JSONNode(.string($0))
                    })))
        Console.out(JSONValue.object(members).rendered)
        return .success
    }

    // MARK: - test

    static func test(_ words: ArraySlice<String>) -> ExitStatus {
        let arguments: Arguments
        do throws(Arguments.UsageError) {
            arguments = try Arguments(words, options: [])
            if arguments.wantsHelp {
                Console.out(help)
                return .success
            }
            guard !arguments.positionals.isEmpty else { throw Arguments.UsageError(message: "missing test file") }
        } catch {
            return KeygateCommand.fail(usage: error, help: help)
        }
        var failed = 0
        var passed = 0
        for path in arguments.positionals.map(GlobalOptions.absolute) {
            let file: PolicyTestFile
            let set: PolicySet
            do throws(KeygateError) {
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw KeygateError(.param, "\(path): cannot read the policy test file")
                }
                do {
                    file = try JSONDecoder().decode(PolicyTestFile.self, from: data)
                } catch {
                    throw KeygateError(.param, "\(path): invalid policy test file: \(error)")
                }
                let base = StandardPaths.directory(of: path)
                set = try PolicyDirectory.load(
                    file.policies.map { $0.hasPrefix("/") ? $0 : StandardPaths.joined(base, $0) })
            } catch {
                Console.err("keygate: \(error.description)")
                return .usage
            }
            for testCase in file.cases {
                if let problem = testCase.check(in: set) {
                    failed += 1
                    Console.out("FAIL \(path): \(problem)")
                } else {
                    passed += 1
                    Console.out("PASS \(path): \(testCase.name)")
                }
            }
        }
        Console.out("\(passed) passed, \(failed) failed")
        return failed == 0 ? .success : .failure
    }
}
