/// A D-Bus address as the wire client reads it.
enum BusAddress {
    /// The socket path of a plain `unix:path=` address (up to any `,key=value`), nil for any
    /// other transport, an escaped path (`%xx`), or a path too long for a Unix socket.
    static func socketPath(_ address: String) -> String? {
        guard address.hasPrefix("unix:path=") else { return nil }
        let path = address.dropFirst("unix:path=".count).prefix { $0 != "," }
        guard !path.isEmpty, !path.contains("%"), path.utf8.count < 108 else { return nil }
        return String(path)
    }
}
