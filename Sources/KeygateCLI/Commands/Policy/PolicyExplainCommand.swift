import Keygate
import KeygatePolicy
import KeygateStore

/// `keygate policy explain`: which organisation rules match a situation, which decide, and
/// the combined requirement, as one JSON object.
struct PolicyExplainCommand: Command {
    static let operation = OptionSpec(
        "operation", .choice("OP", PolicyAction.allCases.map(\.rawValue)), required: true,
        help: "add, read, update, delete, export, import or list")
    static let program = OptionSpec("program", .text("PATH"), help: "the calling program (default: unknown)")
    static let contextFile = OptionSpec("context", .text("FILE"), help: "a context file (as for evaluate)")
    static let options =
        [ItemOptions.service, ItemOptions.account, operation, program, ItemOptions.accessGroup, AddCommand.label]
        + ProtectionOptions.options.reversed() + [contextFile]

    static let configuration = PolicyCommand.subcommand(
        "explain", summary: "explain which organisation rules decide", options: options)

    /// The situation asked about.
    let request: PolicyRequest
    /// The item's protection, as typed.
    let protection: ProtectionOptions
    /// The context file, when given.
    let contextPath: String?

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        request = PolicyRequest(
            action: try arguments.required(Self.operation, as: PolicyAction.self),
            service: arguments.required(ItemOptions.service),
            account: arguments.required(ItemOptions.account),
            accessGroup: arguments.value(ItemOptions.accessGroup) ?? Session.defaultGroup,
            label: arguments.value(AddCommand.label), program: arguments.value(Self.program), accessControl: nil)
        protection = ProtectionOptions(arguments)
        contextPath = arguments.value(Self.contextFile)
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        let set: PolicySet
        do throws(KeygateError) {
            set = try context.global.store.loadPolicies(context.environment.variables)
        } catch {
            return context.console.refuse(error)
        }
        var request = request
        let control = protection.isGiven ? try protection.accessControlValue() : nil
        request.accessControl = control
        let decision = set.decide(request)
        let entitlement = set.entitlement(program: request.program, accessGroup: request.accessGroup)
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
            JSONMember("requirements", .array(decision.requirements.map { JSONNode(.string("\($0.requirement)")) })))
        members.append(JSONMember("freshWithin", decision.freshWithin.map { .number(String($0)) } ?? .null))
        var combined = decision.requirements.map { "\($0.requirement)" }
        if let contextPath {
            let file: ContextFile
            do throws(InputFileError) {
                file = try InputFile.context(contextPath)
            } catch {
                return context.console.refuse(error)
            }
            var state = file.state
            if let bound = decision.freshWithin { state.setReuseSeconds(min(state.reuseSeconds, bound)) }
            let item =
                control ?? (try? AccessControl(protection: .default)) ?? AccessControl(unsatisfiableWith: .default)
            let own = Evaluator().evaluate(
                item, operation: request.action.evaluatedOperation, state: state, now: file.now)
            members.append(JSONMember("item", own.report))
            if case .authenticate(let requirement) = own.outcome { combined.insert("\(requirement)", at: 0) }
            let fresh = state.freshFactors(at: file.now)
            combined = combined.filter { text in
                !decision.requirements.contains { "\($0.requirement)" == text && $0.requirement.isSatisfied(by: fresh) }
            }
        }
        members.append(JSONMember("combinedRequirement", .array(combined.map { JSONNode(.string($0)) })))
        let reasons = decision.reasons.map(\.description)
        let lines = entitlement.isAllowed ? reasons : [entitlement.explanation] + reasons
        members.append(
            JSONMember(
                "explanation",
                .array(
                    (lines.isEmpty ? ["no rule applies: the item's own access control alone"] : lines).map {
                        JSONNode(.string($0))
                    })))
        context.console.out(JSONValue.object(members).rendered)
        return .success
    }
}
