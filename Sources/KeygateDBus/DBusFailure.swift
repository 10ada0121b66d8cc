/// A D-Bus error: its name (`org.freedesktop.Secret.Error.IsLocked`,
/// `org.freedesktop.DBus.Error.InvalidArgs`) and a message for the caller, which never holds a
/// secret. A method handler throws it to answer with an error reply; the connection reports its
/// own failures with it, the sd-bus errno kept.
public struct DBusFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The error's D-Bus name.
    public let name: String
    /// What went wrong, for the caller.
    public let message: String
    /// The errno sd-bus returned, when the failure is the connection's own.
    public let errno: Int32?

    /// A failure named `name`, saying `message`.
    public init(_ name: String, _ message: String, errno: Int32? = nil) {
        self.name = name
        self.message = message
        self.errno = errno
    }

    /// `org.freedesktop.DBus.Error.InvalidArgs`: the call's arguments are not what the method takes.
    public static func invalidArguments(_ message: String) -> DBusFailure {
        DBusFailure("org.freedesktop.DBus.Error.InvalidArgs", message)
    }

    /// `org.freedesktop.DBus.Error.UnknownMethod`.
    public static func unknownMethod(_ interface: String, _ member: String) -> DBusFailure {
        DBusFailure("org.freedesktop.DBus.Error.UnknownMethod", "no method \(member) on \(interface) here")
    }

    /// `org.freedesktop.DBus.Error.Failed`, with sd-bus's errno.
    static func failed(_ what: String, errno code: Int32) -> DBusFailure {
        DBusFailure("org.freedesktop.DBus.Error.Failed", "\(what) failed (errno \(code))", errno: code)
    }

    /// The name and the message.
    public var description: String { "\(name): \(message)" }
}
