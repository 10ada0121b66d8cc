import KeygateAudit
import KeygatePolicy
import KeygateStore

/// `keygate evaluate`: one dry-run decision, printed as one JSON object.
struct EvaluateCommand: Command {
    static let contextFile = OptionSpec("context", .text("FILE"), required: true, help: "the context file (JSON)")
    static let boundEnrollment = OptionSpec(
        "bound-enrollment", .text("IDS"), help: "template ids enrolled when the item was added (ID,ID…)")
    static let operation = OptionSpec("operation", .text("OP"), help: "read (default), add, update or delete")

    static let configuration = CommandConfiguration(
        name: "evaluate", summary: "decide an access control against a context file (dry run)",
        discussion: """
            usage: keygate evaluate --context FILE.json [--access-control FLAGS] [--accessible CLASS]
                                    [--bound-enrollment IDS] [--operation read|add|update|delete]

            Decides an access control against the authentication context described in FILE.json and
            prints {"decision", "status", "statusName", "requirement", "reasons"}. Exit 0 for any
            decision; 8 for invalid flags or class; 2 for a bad context file. With the global
            --audit PATH, the decision is also recorded in that trail.
            """,
        options: [contextFile] + ProtectionOptions.options + [boundEnrollment, operation])

    /// The context file.
    let contextPath: String
    /// The item's protection, as typed.
    let protection: ProtectionOptions
    /// The template ids bound to the item, as typed.
    let boundEnrollment: String?
    /// The operation, as typed.
    let operation: String?

    init(parsing arguments: ParsedArguments) {
        contextPath = arguments.required(Self.contextFile)
        protection = ProtectionOptions(arguments)
        boundEnrollment = arguments.value(Self.boundEnrollment)
        operation = arguments.value(Self.operation)
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        let request = try EvaluationRequest(
            flags: protection.accessControl, accessible: protection.accessible,
            boundEnrollment: boundEnrollment.map { text in
                text.split(separator: ",", omittingEmptySubsequences: false).map { String($0) }
            },
            operation: operation)
        let file: ContextFile
        do throws(InputFileError) {
            file = try InputFile.context(contextPath)
        } catch {
            return context.console.refuse(error)
        }
        let decision = Evaluator().evaluate(
            request.control, operation: request.operation, state: file.state, now: file.now)
        if let path = context.global.store.audit {
            // A dry run is audited only into a trail named explicitly: it touches no store.
            let auditor = Auditor(
                sink: JSONLinesAuditSink(path: path), processID: ProcessIdentity.processID,
                userID: ProcessIdentity.userID)
            try auditor.record(
                AuditEvent(
                    .evaluate, item: nil, accessControl: request.control, decision: decision,
                    factors: AuditEvent.ProvedFactor.all(in: file.state, at: file.now)))
        }
        context.console.out(decision.report.rendered)
        return .success
    }
}
