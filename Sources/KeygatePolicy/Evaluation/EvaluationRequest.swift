/// A dry-run request as `keygate evaluate` and the decision corpus state it: flag names,
/// a class name, the enrollment set bound at add time, and an operation.
public struct EvaluationRequest: Hashable, Sendable {
    /// The access control, bound when an enrollment set was given.
    public let control: AccessControl
    /// The operation.
    public let operation: Operation

    /// Builds a request from its text parts.
    /// - Parameters:
    ///   - flags: comma-separated Apple flag names; nil means no flags (an empty list is refused).
    ///   - accessible: a class name without prefix (`whenUnlockedThisDeviceOnly`); nil means `whenUnlocked`.
    ///   - boundEnrollment: the template ids enrolled when the item was added; required for a
    ///     `biometryCurrentSet` read or update, refused for add (add binds from the context).
    ///   - operation: `read`, `add`, `update` or `delete`; nil means `read`.
    /// - Throws: ``KeygateError`` with `errSecParam` naming the bad word.
    public init(
        flags: String?, accessible: String?, boundEnrollment: [String]?, operation: String?
    ) throws(KeygateError) {
        let parsedFlags =
            try flags.map { (text: String) throws(KeygateError) in try AccessControlFlags(parsing: text) } ?? []
        let protection = try accessible.map { (text: String) throws(KeygateError) in try ProtectionClass(parsing: text)
        }
        var control = try AccessControl(protection: protection ?? .default, flags: parsedFlags)
        let op: Operation
        if let operation {
            guard let parsed = Operation(rawValue: operation) else {
                throw KeygateError(
                    .param, "unknown operation '\(operation)' (expected one of: read, add, update, delete)")
            }
            op = parsed
        } else {
            op = .read
        }
        if let boundEnrollment {
            guard control.constraint.leaves.contains(.biometryCurrentSet) else {
                throw KeygateError(.param, "a bound enrollment set applies only to biometryCurrentSet")
            }
            guard op != .add else {
                throw KeygateError(.param, "add binds the enrollment set from the context; do not give one")
            }
            if boundEnrollment.contains(where: { $0.trimmingSpaces().isEmpty }) {
                throw KeygateError(.param, "the bound enrollment set has an empty template id")
            }
            guard let hash = EnrollmentSetHash(templateIDs: boundEnrollment) else {
                throw KeygateError(.param, "the bound enrollment set must name at least one template id")
            }
            control = control.bound(to: hash)
        } else if control.needsBinding && (op == .read || op == .update) {
            throw KeygateError(
                .param, "biometryCurrentSet needs the enrollment set bound when the item was added (--bound-enrollment)"
            )
        }
        self.control = control
        self.operation = op
    }
}
