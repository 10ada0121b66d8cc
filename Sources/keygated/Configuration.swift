import Glibc
import KeygateLinux

/// The daemon's configuration file (`/etc/keygate/keygated.conf` under systemd): `key = value`
/// lines, `#` starts a comment line, blank lines are ignored. Root-owned: it is the only place
/// that may override what the daemon sees of a caller's device.
struct Configuration: Equatable {
    /// Where a caller's lock state comes from (`logind`: the caller's own logind session).
    var deviceState: LinuxDevice.Mode = .logind
    /// The enrolled biometric templates, one id a line (tests and servers); nil: fprintd.
    var enrollmentFile: String?
    /// Connections open at once, all users together.
    var maximumConnections = 256
    /// Connections open at once for one uid.
    var maximumConnectionsPerUser = 32
    /// Seconds a connection may stay silent (or leave a frame half-sent, counted from the frame's
    /// first byte) before it is closed.
    var idleTimeoutSeconds = 60
    /// Seconds one frame may take, from its first byte to its last, to be taken by a client
    /// (`send-timeout`, 1...3600): a client that reads slowly, however steadily, is closed then.
    var sendTimeoutSeconds = 10
    /// The largest frame accepted or sent, in bytes.
    var maximumFrameLength = 1 << 20
    /// Skip `SO_PEERPIDFD` and use the `pidfd_open` fallback (`pidfd-source = pidfd_open`),
    /// for the fallback's tests and kernels where the socket option misbehaves.
    var forcePidfdFallback = false
    /// Organisation rules and access-group grants (a directory of `.policy` files or one file,
    /// root-owned); nil: none, every group a caller asks for is its own.
    var policies: String?
    /// Seconds a relayed prompt waits for its answer before the request is
    /// `errSecInteractionNotAllowed` (`prompt-timeout`, 1...3600).
    var promptTimeoutSeconds = 60
    /// Requests waiting on a relayed prompt at once, all users together (`max-prompts`, 1...4096).
    var maximumPrompts = 64
    /// Requests waiting on a relayed prompt at once for one uid (`max-prompts-per-user`, 1...4096).
    var maximumPromptsPerUser = 8

    /// The keys that take a whole number: the range allowed and the setting it goes to.
    private static let numbers: [String: (ClosedRange<Int>, any WritableKeyPath<Configuration, Int> & Sendable)] = [
        "max-connections": (1...65_536, \.maximumConnections),
        "max-connections-per-user": (1...65_536, \.maximumConnectionsPerUser),
        "idle-timeout": (1...86_400, \.idleTimeoutSeconds),
        "send-timeout": (1...3_600, \.sendTimeoutSeconds),
        "max-frame-size": (4_096...(16 << 20), \.maximumFrameLength),
        "prompt-timeout": (1...3_600, \.promptTimeoutSeconds),
        "max-prompts": (1...4_096, \.maximumPrompts),
        "max-prompts-per-user": (1...4_096, \.maximumPromptsPerUser),
    ]

    /// Every key the file may set.
    static let keys = [
        "device-state", "enrollment-file", "max-connections", "max-connections-per-user", "idle-timeout",
        "send-timeout",
        "max-frame-size", "pidfd-source", "policies", "prompt-timeout", "max-prompts", "max-prompts-per-user",
    ]

    /// The defaults.
    init() {}

    /// Reads `path`, which must belong to the daemon's user and be writable by nobody else
    /// (anyone who could write it could unlock every caller's device state).
    /// - Throws: ``StartupError`` naming the file, the line and the key for an unknown key, a
    ///   bad value, a repeated key or a line that is not `key = value`.
    init(path: String) throws(StartupError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw StartupError("\(path): cannot be read (errno \(errno))") }
        guard TrustedWriters.only([geteuid()], canWrite: info) else {
            throw StartupError("\(path): must belong to the daemon's user and not be writable by group or others")
        }
        guard let text = Self.read(path) else { throw StartupError("\(path): cannot be read") }
        try self.init(text: text, path: path)
    }

    /// Parses `text` read from `path`.
    init(text: String, path: String) throws(StartupError) {
        var seen: Set<String> = []
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmed(" \t\r")
            if line.isEmpty || line.hasPrefix("#") { continue }
            let number = offset + 1
            guard let equals = line.firstIndex(of: "=") else {
                throw StartupError("\(path):\(number): expected 'key = value'")
            }
            let key = String(line[..<equals]).trimmed(" \t")
            let value = String(line[line.index(after: equals)...]).trimmed(" \t")
            let place = "\(path):\(number): \(key)"
            guard Self.keys.contains(key) else {
                throw StartupError(
                    "\(path):\(number): unknown key '\(key)' (known: \(Self.keys.joined(separator: ", ")))")
            }
            guard seen.insert(key).inserted else { throw StartupError("\(place): given twice") }
            switch key {
            case "device-state":
                guard let mode = LinuxDevice.Mode(rawValue: value) else {
                    throw StartupError("\(place): '\(value)' is not one of logind, unlocked, locked")
                }
                deviceState = mode
            case "enrollment-file", "policies":
                guard value.hasPrefix("/") else { throw StartupError("\(place): '\(value)' is not an absolute path") }
                if key == "policies" { policies = value } else { enrollmentFile = value }
            case "pidfd-source":
                guard value == "auto" || value == "pidfd_open" else {
                    throw StartupError("\(place): '\(value)' is not one of auto, pidfd_open")
                }
                forcePidfdFallback = value == "pidfd_open"
            default:
                // Every other key is a whole number in its range.
                guard let (range, setting) = Self.numbers[key] else {
                    throw StartupError("\(place): a known key this daemon does not read (a bug: report it)")
                }
                self[keyPath: setting] = try Self.number(value, range, place)
            }
        }
    }

    private static func number(_ value: String, _ range: ClosedRange<Int>, _ place: String) throws(StartupError)
        -> Int
    {
        guard let number = Int(value), range.contains(number) else {
            throw StartupError(
                "\(place): '\(value)' is not a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    private static func read(_ path: String) -> String? {
        guard let file = fopen(path, "re") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count > 0 { bytes.append(contentsOf: chunk[0..<count]) }
            if count < chunk.count { break }
            if bytes.count > 1 << 20 { return nil }
        }
        guard ferror(file) == 0 else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}

extension StringProtocol {
    func trimmed(_ set: String) -> String {
        var view = Substring(self)
        while let first = view.first, set.contains(first) { view.removeFirst() }
        while let last = view.last, set.contains(last) { view.removeLast() }
        return String(view)
    }
}
