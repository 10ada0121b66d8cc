import FoundationEssentials
import Glibc
import KeygatePolicy
import KeygateStore

/// `keygate evaluate`: one dry-run decision, printed as one JSON object.
enum EvaluateCommand {
    static let options: [Arguments.Option] = [
        .init(name: "context", value: "FILE", help: "the context file (JSON), required"),
        .init(
            name: "access-control", value: "FLAGS", help: "comma-separated flags, e.g. biometryAny,devicePasscode,or"),
        .init(name: "accessible", value: "CLASS", help: "protection class, e.g. whenUnlockedThisDeviceOnly"),
        .init(
            name: "bound-enrollment", value: "IDS", help: "template ids enrolled when the item was added (ID,ID…)"),
        .init(name: "operation", value: "OP", help: "read (default), add, update or delete"),
    ]

    static let help = """
        usage: keygate evaluate --context FILE.json [--access-control FLAGS] [--accessible CLASS]
                                [--bound-enrollment IDS] [--operation read|add|update|delete]

        Decides an access control against the authentication context described in FILE.json and
        prints {"decision", "status", "statusName", "requirement", "reasons"}. Exit 0 for any
        decision; 8 for invalid flags or class; 2 for a bad context file. With the global
        --audit PATH, the decision is also recorded in that trail.

        \(Arguments.helpLines(options))
        """

    @Sendable static func run(_ global: GlobalOptions, _ words: ArraySlice<String>) async -> ExitStatus {
        let arguments: Arguments
        let path: String
        do throws(Arguments.UsageError) {
            arguments = try Arguments(words, options: options)
            if arguments.wantsHelp {
                Console.out(help)
                return .success
            }
            try arguments.expectNoPositionals()
            path = try arguments.required("context")
        } catch {
            return KeygateCommand.fail(usage: error, help: help)
        }
        let request: EvaluationRequest
        do throws(KeygateError) {
            request = try EvaluationRequest(
                flags: arguments.values["access-control"], accessible: arguments.values["accessible"],
                boundEnrollment: arguments.values["bound-enrollment"].map { text in
                    text.split(separator: ",", omittingEmptySubsequences: false).map { String($0) }
                },
                operation: arguments.values["operation"])
        } catch {
            return KeygateCommand.fail(error)
        }
        let context: ContextFile
        do throws(InputFileError) {
            context = try ContextFile(parsing: InputFile.text(path, limit: InputFile.contextLimit), file: path)
        } catch {
            return KeygateCommand.fail(error)
        }
        let decision = Evaluator().evaluate(
            request.control, operation: request.operation, state: context.state, now: context.now)
        if let path = global.audit {
            // A dry run is audited only into a trail named explicitly: it touches no store.
            let auditor = Auditor(
                sink: JSONLinesAuditSink(path: path), processID: ProcessIdentity.processID,
                userID: ProcessIdentity.userID)
            do {
                try auditor.record(
                    AuditEvent(
                        .evaluate, item: nil, accessControl: request.control, decision: decision,
                        factors: AuditEvent.ProvedFactor.all(in: context.state, at: context.now)))
            } catch {
                return KeygateCommand.fail(error)
            }
        }
        Console.out(decision.report.rendered)
        return .success
    }
}
