/// A method call a ``DBusConnection`` received: who sent it (the bus's unique name, which the
/// bus itself assigns), where to, and its arguments.
public struct DBusMethodCall: Sendable {
    /// The sender's unique name (`:1.42`), set by the bus, never by the sender.
    public let sender: String
    /// The object path called.
    public let path: String
    /// The interface named (empty when the call names none).
    public let interface: String
    /// The method.
    public let member: String
    /// The arguments, in order.
    public let arguments: [DBusValue]

    /// The call's arguments when their signature is `signature`.
    /// - Throws: `org.freedesktop.DBus.Error.InvalidArgs` naming the method and both signatures.
    public func arguments(_ signature: String) throws(DBusFailure) -> [DBusValue] {
        let given = arguments.map(\.signature).joined()
        guard given == signature else {
            throw .invalidArguments("\(interface).\(member) takes (\(signature)), not (\(given))")
        }
        return arguments
    }
}
