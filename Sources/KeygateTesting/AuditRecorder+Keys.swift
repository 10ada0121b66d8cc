public import KeygateAudit
public import KeygateItems
import KeygatePolicy

extension AuditRecorder {
    /// The records of uses (`sign`, `computeKey`) of `key`, oldest first.
    public func keyUses(of key: KeyFields) -> [AuditRecord] {
        (records(.sign, item: key.auditIdentity) + records(.computeKey, item: key.auditIdentity))
            .sorted { $0.sequence < $1.sequence }
    }

    /// Checks that the last use of `key` was decided `decision` and names `algorithm` and the
    /// SHA-256 of `input` (never `input`).
    public func checkLastKeyUse(
        of key: KeyFields, is decision: AuditEvent.Verdict, algorithm: String, input: [UInt8]
    ) -> String? {
        guard let last = keyUses(of: key).last?.event else { return "no use of \(key.auditIdentity) was recorded" }
        guard last.decision == decision else { return "the last use was \(last.decision), not \(decision)" }
        let expected = AuditNote.keyUse(algorithm: algorithm, inputSHA256: Hex.string(SHA256.hash(input)))
        guard last.notes.contains(expected) else {
            return "the last use does not name \(expected); its notes: \(last.notes.map(\.description))"
        }
        return nil
    }

    /// Reports a failure unless ``checkLastKeyUse(of:is:algorithm:input:)`` passes.
    public func expectLastKeyUse(
        of key: KeyFields, is decision: AuditEvent.Verdict, algorithm: String, input: [UInt8],
        filePath: StaticString = #filePath, line: UInt = #line
    ) {
        TestFailure.report(
            checkLastKeyUse(of: key, is: decision, algorithm: algorithm, input: input), filePath: filePath, line: line)
    }
}
