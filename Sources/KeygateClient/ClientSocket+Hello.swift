import KeygateItems
import KeygatePolicy
import KeygateProtocol

extension ClientSocket {
    /// Reads the daemon's challenge (it speaks first, once it has read who this process is;
    /// a daemon silent for `wait` seconds speaks protocol 1, which waits for hello) and says
    /// hello echoing its nonce, under `requestID`.
    /// - Returns: the daemon's version string.
    /// - Throws: the daemon's refusal of the hello, or `errSecNotAvailable` naming the socket
    ///   for a daemon that sends something else or nothing in time.
    func greet(
        requestID: UInt32, accessGroups: [String], clientName: String, answersPrompts: Bool, wait: Double,
        replyTimeout: Double
    ) throws(KeygateError) -> String {
        guard let challengeFrame = try receive(withinMilliseconds: Int32(wait * 1000)) else {
            throw KeygateError(
                .notAvailable,
                "keygated at \(path) sent no challenge in \(Int(wait)) s: it may speak protocol 1 "
                    + "(restart keygated after upgrading Keygate)")
        }
        let nonce: [UInt8]
        switch try Self.decode(challengeFrame, path: path) {
        case .challenge(let sent): nonce = sent
        case let other: throw Self.unexpected(other, path: path, for: "began with")
        }
        try send(
            .hello(
                minimumVersion: FrameLimits.version, maximumVersion: FrameLimits.version, accessGroups: accessGroups,
                client: clientName, challenge: nonce, answersPrompts: answersPrompts), requestID: requestID)
        switch try Self.decode(try receive(timeout: replyTimeout), path: path) {
        case .helloReply(_, let version): return version
        case let other: throw Self.unexpected(other, path: path, for: "answered hello with")
        }
    }

    /// The message `frame` holds (its payload wiped once decoded).
    /// - Throws: `errSecNotAvailable` naming the socket when it breaks the protocol.
    static func decode(_ frame: Frame, path: String) throws(KeygateError) -> Message {
        var frame = frame
        defer { frame.wipe() }
        do throws(ProtocolError) {
            return try Message(frame)
        } catch {
            throw KeygateError(.notAvailable, "keygated at \(path) broke the protocol: \(error)")
        }
    }

    /// The error an unexpected frame stands for: the daemon's own error, or a broken exchange.
    static func unexpected(_ message: Message, path: String, for what: String) -> KeygateError {
        message.keygateError ?? KeygateError(.notAvailable, "keygated at \(path) \(what) \(message.type)")
    }
}
