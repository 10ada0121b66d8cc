import FoundationEssentials
import Glibc
import KeygateLinux
import KeygatePolicy
import KeygateStore

/// `keygate audit show | audit verify | audit repair`: the decision trail kept next to the store.
enum AuditCommand {
    static let help = """
        usage: keygate [--audit PATH] audit show | audit verify | audit repair [--restart]

        show    prints the audit trail, one JSON record a line (never a value or passphrase)
        verify  checks the hash chain, the head kept beside the trail and the anchor kept in
                the store (a trail deleted with its head, or restarted, is broken); exit 0 when intact
                (also when records were written past the head by a crash or a failed head
                write, which it says), 9 naming the first broken sequence number otherwise
        repair  brings the head forward over records written past it (a crash or a failed
                head write) and records that in the trail, saying what it did; the next
                command that writes a record does the same. A trail that does not chain
                (tampering) is never repaired: exit 9
                --restart: also accept a trail that no longer reaches the store's anchor
                (deleted with its head, or restarted) when its own chain is intact; the
                trail records which anchor it replaced
        """

    static let options: [Arguments.Option] = [
        .init(name: "restart", value: nil, help: "accept a trail that no longer reaches the store's anchor")
    ]

    @Sendable static func run(_ global: GlobalOptions, _ words: ArraySlice<String>) async -> ExitStatus {
        let arguments: Arguments
        do throws(Arguments.UsageError) {
            arguments = try Arguments(words, options: options)
            if arguments.wantsHelp {
                Console.out(help)
                return .success
            }
            guard arguments.positionals.count == 1, ["show", "verify", "repair"].contains(arguments.positionals[0])
            else {
                throw Arguments.UsageError(message: "expected 'audit show', 'audit verify' or 'audit repair'")
            }
        } catch {
            return KeygateCommand.fail(usage: error, help: help)
        }
        do throws(KeygateError) {
            let path = try global.auditPath()
            switch arguments.positionals[0] {
            case "show":
                for line in try AuditTrailFile.lines(at: path) { Console.out(line) }
                return .success
            case "repair":
                return try repair(
                    path, anchors: Session.anchorStore(global), restart: arguments.flags.contains("restart"))
            default:
                return try verify(path, anchors: Session.anchorStore(global))
            }
        } catch {
            return KeygateCommand.fail(error)
        }
    }

    static func verify(_ path: String, anchors: SQLiteItemStore?) throws(KeygateError) -> ExitStatus {
        let verdict = try AuditTrailFile.verify(at: path, anchors: anchors)
        if case .broken(let sequence, let reason) = verdict {
            throw KeygateError(.decode, "audit trail \(path) is broken at sequence \(sequence): \(reason)")
        }
        Console.out("audit trail \(path): \(verdict)")
        return .success
    }

    static func repair(_ path: String, anchors: SQLiteItemStore?, restart: Bool) throws(KeygateError) -> ExitStatus {
        // Tampering is reported as verify reports it, and nothing is written; --restart looks
        // at the trail's own chain only.
        let verdict = try AuditTrailFile.verify(at: path, anchors: restart ? nil : anchors)
        switch verdict {
        case .broken(let sequence, let reason):
            // Only the anchor is missed when the trail's own chain is intact: say how to accept it.
            var hint = ""
            if !restart, anchors != nil, try AuditTrailFile.verify(at: path).isIntactOrRecoverable {
                hint = "; if the trail was lost on purpose, 'keygate audit repair --restart' accepts it as it is"
            }
            throw KeygateError(
                .decode,
                "audit trail \(path) is broken at sequence \(sequence): \(reason); tampering is not repaired\(hint)")
        case .intact where !restart:
            Console.out("audit trail \(path): nothing to repair, \(verdict)")
            return .success
        case .intact, .headBehind, .tornTail:
            let sink = JSONLinesAuditSink(path: path, anchors: anchors)
            guard let done = try sink.repair(at: SystemClock().now(), restartingAnchor: restart) else {
                Console.out("audit trail \(path): nothing to repair, \(verdict)")
                return .success
            }
            var what: [String] = []
            if done.recovered > 0 {
                what.append(
                    "the head was at record \(done.staleHead); moved it over the \(done.recovered) record(s) written past it"
                )
            }
            if done.tornBytes > 0 { what.append("cut off a partial record of \(done.tornBytes) bytes") }
            if done.anchorRestarted { what.append("replaced the store's anchor with this trail's head") }
            Console.out(
                "audit trail \(path): repaired: \(what.joined(separator: ", ")); recorded this as record \(done.record)"
            )
            return .success
        }
    }
}

/// `keygate lock`: forget this session's proof records, like `sudo -k`.
enum LockCommand {
    static let help = """
        usage: keygate lock

        Forgets the proofs of presence this login session recorded for reuse, so the next
        command that needs one asks again.
        """

    @Sendable static func run(_ global: GlobalOptions, _ words: ArraySlice<String>) async -> ExitStatus {
        if let status = Arguments.bare(words, help: help) { return status }
        do {
            try LinuxWiring.proofRecords()?.forget()
            Console.err("keygate: forgot this session's proofs")
            return .success
        } catch {
            return KeygateCommand.fail(KeygateError(.io, "\(error)"))
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
