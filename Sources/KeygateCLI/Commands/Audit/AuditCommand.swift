import FoundationEssentials
import KeygateAudit
import KeygatePolicy
import KeygateStore

/// `keygate audit show | audit verify | audit repair`: the decision trail kept next to the store.
enum AuditCommand: CommandGroup {
    static let configuration = CommandConfiguration(
        name: "audit", summary: "show, verify or repair the audit trail",
        discussion: """
            usage: keygate [--audit PATH] audit show | audit verify | audit repair [--restart]

            show    prints the audit trail, one JSON record a line (never a value or passphrase)
            verify  checks the hash chain, the head kept beside the trail and the anchor kept in
                    the store (a trail deleted with its head, or restarted, is broken); exit 0 when intact
                    (also when records were written past the head by a crash or a failed head
                    write, or are held in the store past a trail cut short by a power loss,
                    which it says), 9 naming the first broken sequence number otherwise
            repair  brings the head forward over records written past it (a crash or a failed
                    head write), writes back records the store holds past the trail's end (a
                    power loss), and records that in the trail, saying what it did; the next
                    command that writes a record does the same. A trail that does not chain
                    (tampering) is never repaired: exit 9
                    --restart: also accept a trail that no longer reaches the store's anchor
                    (deleted with its head, or restarted) when its own chain is intact; the
                    trail records which anchor it replaced
            """,
        options: AuditRepairCommand.options, maximumPositionals: nil, choosesMode: true)

    static var subcommands: [any Command.Type] {
        [
            AuditShowCommand.self, AuditVerifyCommand.self, AuditRepairCommand.self,
        ]
    }

    static let missingSubcommand = UsageError("expected 'audit show', 'audit verify' or 'audit repair'")

    static func unknownSubcommand(_ word: String) -> UsageError { missingSubcommand }

    /// The store whose audit anchors the trail is checked against: the store at `paths`, when
    /// it exists (a missing one is not created).
    static func anchorStore(_ paths: StorePaths) throws(KeygateError) -> SQLiteItemStore? {
        guard
            FileManager.default.fileExists(atPath: paths.store)
                || FileManager.default.fileExists(atPath: paths.store + ".key")
        else { return nil }
        return try SQLiteItemStore(path: paths.store)
    }
}

/// `keygate audit show`: the trail, one JSON record a line.
struct AuditShowCommand: Command {
    static let configuration = AuditCommand.subcommand("show", summary: "print the audit trail")

    init(parsing arguments: ParsedArguments) {}

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        if case .daemon = context.global.mode {
            let lines = try await DaemonWiring.auditRecords(context.global)
            for line in lines { context.console.out(line) }
            return .success
        }
        for line in try AuditTrailFile.lines(at: context.global.store.paths().audit) { context.console.out(line) }
        return .success
    }
}

/// `keygate audit verify`: the chain, the head and the store's anchor; exit 9 when broken.
struct AuditVerifyCommand: Command {
    static let configuration = AuditCommand.subcommand("verify", summary: "verify the audit trail")

    init(parsing arguments: ParsedArguments) {}

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        if case .daemon(let socket) = context.global.mode {
            let verdict = try await DaemonWiring.auditVerify(context.global)
            if let problem = verdict.problem {
                throw KeygateError(.decode, "the audit trail kept by keygated at \(socket) is broken: \(problem)")
            }
            context.console.out("the audit trail kept by keygated at \(socket): intact, \(verdict.records) records")
            return .success
        }
        let paths = try context.global.store.paths()
        let verdict = try AuditTrailFile.verify(at: paths.audit, anchors: AuditCommand.anchorStore(paths))
        if case .broken(let sequence, let reason) = verdict {
            throw KeygateError(.decode, "audit trail \(paths.audit) is broken at sequence \(sequence): \(reason)")
        }
        context.console.out("audit trail \(paths.audit): \(verdict)")
        return .success
    }
}

/// `keygate audit repair [--restart]`: brings the head forward after a crash; never repairs
/// tampering.
struct AuditRepairCommand: Command {
    static let restart = OptionSpec(
        "restart", .flag, help: "accept a trail that no longer reaches the store's anchor")
    static let options = [restart]

    static let configuration = AuditCommand.subcommand(
        "repair", summary: "repair the audit trail", options: options)

    /// Whether a trail that no longer reaches the store's anchor is accepted.
    let restartsAnchor: Bool

    init(parsing arguments: ParsedArguments) {
        restartsAnchor = arguments.flag(Self.restart)
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        try context.requireEmbedded("audit repair")
        let paths = try context.global.store.paths()
        let path = paths.audit
        let anchors = try AuditCommand.anchorStore(paths)
        // Tampering is reported as verify reports it, and nothing is written; --restart looks
        // at the trail's own chain only.
        let verdict = try AuditTrailFile.verify(at: path, anchors: restartsAnchor ? nil : anchors)
        switch verdict {
        case .broken(let sequence, let reason):
            // Only the anchor is missed when the trail's own chain is intact: say how to accept it.
            var hint = ""
            if !restartsAnchor, anchors != nil, try AuditTrailFile.verify(at: path).isIntactOrRecoverable {
                hint = "; if the trail was lost on purpose, 'keygate audit repair --restart' accepts it as it is"
            }
            throw KeygateError(
                .decode,
                "audit trail \(path) is broken at sequence \(sequence): \(reason); tampering is not repaired\(hint)")
        case .intact where !restartsAnchor:
            context.console.out("audit trail \(path): nothing to repair, \(verdict)")
            return .success
        case .intact, .headBehind, .tornTail, .heldInStore:
            let sink = JSONLinesAuditSink(path: path, anchors: anchors)
            guard let done = try sink.repair(at: SystemClock().now(), restartingAnchor: restartsAnchor) else {
                context.console.out("audit trail \(path): nothing to repair, \(verdict)")
                return .success
            }
            var what: [String] = []
            if done.recovered > 0 {
                what.append(
                    "the head was at record \(done.staleHead); moved it over the \(done.recovered) record(s) written past it"
                )
            }
            if done.restored > 0 {
                what.append("wrote back the \(done.restored) record(s) the store held past the trail's end")
            }
            if done.tornBytes > 0 { what.append("cut off a partial record of \(done.tornBytes) bytes") }
            if done.anchorRestarted { what.append("replaced the store's anchor with this trail's head") }
            context.console.out(
                "audit trail \(path): repaired: \(what.joined(separator: ", ")); recorded this as record \(done.record)"
            )
            return .success
        }
    }
}

extension AuditVerification {
    /// Not broken: intact, or a crash the next record (or `audit repair`) recovers from.
    var isIntactOrRecoverable: Bool {
        if case .broken = self { return false }
        return true
    }
}
