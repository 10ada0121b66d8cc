import KeygateItems
import KeygateKeys
import KeygatePolicy
import KeygateSSHAgent
import Synchronization
import Testing

/// The agent protocol's answers, driven frame by frame against a backend that records what it
/// was asked (RFC 9987; OpenSSH PROTOCOL.agent §1 for session-bind).
@Suite struct SSHAgentSessionTests {
    /// Holds keys made by the software keeper and signs with them, recording each request.
    final class Backend: SSHAgentBackend {
        let keeper = SoftwareKeyKeeper()
        let kept: [(KeyFields, KeptKey)]
        let requests = Mutex<[(data: [UInt8], destination: SSHDestination?, forwarded: Bool)]>([])

        init() throws {
            kept = try [KeyType.p256, .ed25519].map { type in
                let key = try SoftwareKeyKeeper().generate(type)
                let fields = KeyFields(
                    accessGroup: "keygate", label: "\(type)-key", applicationLabel: key.publicKey.applicationLabel,
                    type: type, tokenID: "keygate.software", publicKey: key.publicKey.bytes,
                    accessControl: try AccessControl(protection: .whenUnlocked), created: Timestamp(seconds: 0),
                    modified: Timestamp(seconds: 0))
                return (fields, key)
            }
        }

        func keys(for peer: SSHAgentPeer) async throws(KeygateError) -> [KeyFields] { kept.map(\.0) }

        func sign(
            _ data: [UInt8], with key: KeyFields, for peer: SSHAgentPeer, destination: SSHDestination?,
            forwarded: Bool
        ) async throws(KeygateError) -> [UInt8] {
            requests.withLock { $0.append((data, destination, forwarded)) }
            let kept = self.kept.first { $0.0 == key }!.1
            return try keeper.sign(
                data, algorithm: key.type == .p256 ? .ecdsaSignatureMessageX962SHA256 : .ed25519, with: kept.blob,
                type: key.type)
        }
    }

    static let peer = SSHAgentPeer(uid: 1000, pid: 42, executable: "/usr/bin/ssh", program: "/usr/bin/ssh")

    static func session(_ backend: Backend) -> SSHAgentSession {
        SSHAgentSession(peer: peer, backend: backend, log: { _ in })
    }

    static func signRequest(_ blob: [UInt8], _ data: [UInt8], flags: UInt32 = 0) -> [UInt8] {
        var writer = SSHWireWriter()
        writer.byte(13)
        writer.bytes(blob)
        writer.bytes(data)
        writer.uint32(flags)
        return writer.output
    }

    static func bind(_ hostKey: KeptKey, keeper: SoftwareKeyKeeper, session: [UInt8], forwarding: Bool) throws
        -> [UInt8]
    {
        let signature = try keeper.sign(session, algorithm: .ed25519, with: hostKey.blob, type: .ed25519)
        var writer = SSHWireWriter()
        writer.byte(27)
        writer.string("session-bind@openssh.com")
        writer.bytes(hostKey.publicKey.openSSHBlob)
        writer.bytes(session)
        writer.bytes(try SSHSignature(type: .ed25519, keeperForm: signature).blob())
        writer.byte(forwarding ? 1 : 0)
        return writer.output
    }

    /// Identities: each key's OpenSSH blob with its label as comment (RFC 9987 §3.5).
    @Test func identitiesListTheKeysWithTheirLabels() async throws {
        let backend = try Backend()
        var session = Self.session(backend)
        var reader = SSHWireReader(try await session.reply(to: [11]))
        #expect(try reader.byte("type") == 12)
        #expect(try reader.uint32("count") == 2)
        for (fields, kept) in backend.kept {
            #expect(try reader.bytes("blob") == kept.publicKey.openSSHBlob)
            #expect(try reader.string("comment") == fields.label)
        }
        #expect(reader.isAtEnd)
    }

    /// A sign request answers an SSH signature blob that verifies over the data, for both key
    /// types; flags (rsa-sha2-256 / -512, or unknown bits) and an unknown key are refused.
    @Test func signaturesVerifyAndFlagsAreRefused() async throws {
        let backend = try Backend()
        var session = Self.session(backend)
        let data = Array("data to sign".utf8)
        for (_, kept) in backend.kept {
            var reader = SSHWireReader(
                try await session.reply(to: Self.signRequest(kept.publicKey.openSSHBlob, data)))
            #expect(try reader.byte("type") == 14)
            let signature = try SSHSignature(blob: try reader.bytes("signature"))
            #expect(signature.isValid(for: data, by: kept.publicKey))
            for flags: UInt32 in [2, 4, 8] {
                #expect(
                    try await session.reply(to: Self.signRequest(kept.publicKey.openSSHBlob, data, flags: flags)) == [5]
                )
            }
        }
        let stranger = try SoftwareKeyKeeper().generate(.ed25519)
        #expect(try await session.reply(to: Self.signRequest(stranger.publicKey.openSSHBlob, data)) == [5])
        #expect(backend.requests.withLock { $0.count } == 2, "refused requests never reach the keys")
    }

    /// Adding, removing and locking are refused with SSH_AGENT_FAILURE; an unknown extension
    /// with SSH_AGENT_EXTENSION_FAILURE; `query` names what is served.
    @Test func whatIsNotServedIsRefused() async throws {
        let backend = try Backend()
        var session = Self.session(backend)
        for type: UInt8 in [17, 18, 19, 20, 21, 22, 23, 25, 26, 1, 200] {
            #expect(try await session.reply(to: [type]) == [5], "type \(type)")
        }
        var unknown = SSHWireWriter()
        unknown.byte(27)
        unknown.string("restrict-destination-v00@openssh.com")
        #expect(try await session.reply(to: unknown.output) == [28])
        var query = SSHWireWriter()
        query.byte(27)
        query.string("query")
        var reader = SSHWireReader(try await session.reply(to: query.output))
        #expect(try reader.byte("type") == 29)
        #expect(try reader.string("name") == "query")
        #expect(try reader.string("first") == "query")
        #expect(try reader.string("second") == "session-bind@openssh.com")
    }

    /// A frame cut short, with bytes left over, or whose extension name is not UTF-8 does not
    /// parse: the listener closes the connection.
    @Test(arguments: [
        [UInt8](), [13, 0, 0, 0, 9, 1], [11, 0], [27, 0, 0, 0, 2, 0xff, 0xfe],
    ])
    func malformedFramesAreErrors(_ payload: [UInt8]) async throws {
        var session = Self.session(try Backend())
        await #expect(throws: KeygateError.self) { _ = try await session.reply(to: payload) }
    }

    /// session-bind@openssh.com: the host key's signature of the session identifier must
    /// verify; the signature request then carries the destination; a connection bound for
    /// authentication is not bound again, and a request for another session is refused.
    @Test func aVerifiedBindingNamesTheDestination() async throws {
        let backend = try Backend()
        let keeper = SoftwareKeyKeeper()
        let hostKey = try keeper.generate(.ed25519)
        var session = Self.session(backend)
        let sessionID = Array(repeating: UInt8(7), count: 32)
        let other = try keeper.generate(.ed25519)
        // Signed by another key than the one named: refused, nothing bound.
        var forged = try Self.bind(hostKey, keeper: keeper, session: sessionID, forwarding: false)
        let named = hostKey.publicKey.openSSHBlob
        let replaced = other.publicKey.openSSHBlob
        let start = forged.firstRange(of: named)!
        forged.replaceSubrange(start, with: replaced)
        #expect(try await session.reply(to: forged) == [28])
        #expect(
            try await session.reply(to: Self.bind(hostKey, keeper: keeper, session: sessionID, forwarding: false)) == [
                6
            ])
        #expect(
            try await session.reply(to: Self.bind(hostKey, keeper: keeper, session: [1, 2, 3], forwarding: false)) == [
                28
            ],
            "a connection bound for authentication is not bound again")
        let key = backend.kept[1].1
        var userauth = SSHWireWriter()
        userauth.bytes(sessionID)
        userauth.byte(50)
        let signed = try await session.reply(to: Self.signRequest(key.publicKey.openSSHBlob, userauth.output))
        #expect(signed.first == 14)
        let destination = try #require(backend.requests.withLock { $0.last?.destination })
        #expect(destination.hostKeyFingerprint == PublicKey.fingerprint(ofOpenSSHBlob: hostKey.publicKey.openSSHBlob))
        #expect(!destination.forwarded)
        var elsewhere = SSHWireWriter()
        elsewhere.bytes([9, 9, 9])
        elsewhere.byte(50)
        #expect(try await session.reply(to: Self.signRequest(key.publicKey.openSSHBlob, elsewhere.output)) == [5])
    }

    /// A forwarded binding marks every later signature of the connection as forwarded (the
    /// backend then reuses no proof).
    @Test func aForwardedBindingIsPassedOn() async throws {
        let backend = try Backend()
        let keeper = SoftwareKeyKeeper()
        var session = Self.session(backend)
        let hostKey = try keeper.generate(.ed25519)
        #expect(
            try await session.reply(to: Self.bind(hostKey, keeper: keeper, session: [4, 4], forwarding: true)) == [6])
        let key = backend.kept[0].1
        #expect(try await session.reply(to: Self.signRequest(key.publicKey.openSSHBlob, [1])).first == 14)
        #expect(backend.requests.withLock { $0.last?.forwarded } == true)
    }
}
