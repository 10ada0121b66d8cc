import KeygatePolicy
import KeygateProtocol
import KeygateServing

extension RequestHandler {
    /// The reply to `auditShow` or `auditVerify`, made by `body` from the caller uid's own trail
    /// only: the records as JSON lines, or the records checked and the problem. Never a path or
    /// a descriptor; a failure is an error frame with its status (`errSecIO`, `errSecAllocate`).
    func auditReply(_ body: (UserAuditTrail) throws(KeygateError) -> Message) -> Message {
        do throws(KeygateError) {
            return try body(try keychains.trail(identity.uid))
        } catch {
            return Message(error)
        }
    }
}
