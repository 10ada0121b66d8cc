import Foundation
import KeygatePolicy
import KeygateStore

/// `keygate audit show | audit verify`: the decision trail kept next to the store.
enum AuditCommand {
    static let help = """
        usage: keygate [--audit PATH] audit show | audit verify

        show    prints the audit trail, one JSON record a line (never a value or passphrase)
        verify  checks the hash chain and the head kept beside the trail; exit 0 when intact,
                9 naming the first broken sequence number otherwise
        """

    @Sendable static func run(_ global: GlobalOptions, _ words: ArraySlice<String>) async -> ExitStatus {
        let arguments: Arguments
        do throws(Arguments.UsageError) {
            arguments = try Arguments(words, options: [])
            if arguments.wantsHelp {
                Console.out(help)
                return .success
            }
            guard arguments.positionals.count == 1, ["show", "verify"].contains(arguments.positionals[0]) else {
                throw Arguments.UsageError(message: "expected 'audit show' or 'audit verify'")
            }
        } catch {
            return KeygateCommand.fail(usage: error, help: help)
        }
        do throws(KeygateError) {
            let path = try global.auditPath()
            if arguments.positionals[0] == "show" {
                for line in try AuditTrailFile.lines(at: path) { Console.out(line) }
                return .success
            }
            switch try AuditTrailFile.verify(at: path) {
            case .intact(let records):
                Console.out("audit trail \(path): intact (\(records) records)")
                return .success
            case .broken(let sequence, let reason):
                return KeygateCommand.fail(
                    KeygateError(.decode, "audit trail \(path) is broken at sequence \(sequence): \(reason)"))
            }
        } catch {
            return KeygateCommand.fail(error)
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
            try RuntimeRecords.open()?.forget()
            Console.err("keygate: forgot this session's proofs")
            return .success
        } catch {
            return KeygateCommand.fail(KeygateError(.io, "\(error)"))
        }
    }
}
