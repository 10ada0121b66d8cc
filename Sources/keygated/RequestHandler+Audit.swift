import KeygatePolicy
import KeygateProtocol

extension RequestHandler {
    /// The reply to `auditShow` or `auditVerify`, from the caller uid's own trail only: the
    /// records as JSON lines, or the records checked and the problem. Never a path or a
    /// descriptor; a failure is an error frame with its status (`errSecIO`, `errSecAllocate`).
    func auditReply(to message: Message) -> Message {
        do throws(KeygateError) {
            let trail = try keychains.trail(identity.uid)
            switch message {
            case .auditShow(let limit):
                return .auditRecords(try trail.show(limit: limit))
            case .auditVerify:
                let (records, problem) = try trail.verify()
                return .auditVerified(records: records, problem: problem)
            default:
                return Message(KeygateError(.badReq, "not an audit request"))
            }
        } catch {
            return Message(error)
        }
    }
}
