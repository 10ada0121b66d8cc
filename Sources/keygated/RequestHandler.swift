import Keygate
import KeygatePolicy
import KeygateProtocol
import KeygateServing

/// Turns one decoded, in-order request into its reply, acting on the caller's own keychain
/// only. The set of requests is fixed and typed (the protocol's ``Message``); nothing here
/// parses bytes.
struct RequestHandler: Sendable {
    static let daemonVersion = Arguments.version

    let identity: PeerIdentity
    let keychains: UserKeychains
    /// The connection's prompt relay (nil: nobody to ask).
    var relay: PromptRelay? = nil

    /// The reply to `hello`: this build's protocol when the client speaks it, and the keychain for its groups.
    func hello(minimum: UInt8, maximum: UInt8, accessGroups: [String]) -> (Message, CallerKeychain?) {
        guard (minimum...max(minimum, maximum)).contains(FrameLimits.version) else {
            return (
                .error(
                    status: KeygateStatus.unimplemented.rawValue,
                    message: "this daemon speaks protocol \(FrameLimits.version) only"), nil
            )
        }
        guard accessGroups.count <= 64, accessGroups.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 256 }) else {
            return (Message(KeygateError(.param, "access groups must be 1 to 256 bytes, at most 64 of them")), nil)
        }
        do {
            let keychain = try keychains.keychain(for: identity, accessGroups: accessGroups, relay: relay)
            return (.helloReply(version: FrameLimits.version, daemonVersion: Self.daemonVersion), keychain)
        } catch {
            Log.line("uid \(identity.uid): store unavailable: \(error.status)")
            return (Message(error), nil)
        }
    }

    /// The reply to `request`, made after hello, on the caller's keychain.
    func reply(to request: DaemonRequest, keychain caller: CallerKeychain) -> Message {
        let keychain = caller.keychain
        switch request.operation {
        case .status:
            return .statusReply(
                StatusPayload(
                    mode: "daemon", uid: identity.uid, gid: identity.gid, pid: identity.pid,
                    executable: identity.executable, daemonVersion: Self.daemonVersion,
                    pidfdSource: identity.pidfdSource))
        case .add(let add):
            return Self.outcome { () async throws(KeygateError) -> Message in
                try await keychain.add(add)
                return .done
            }
        case .copyMatching(let query):
            return Self.outcome { () async throws(KeygateError) -> Message in
                .items(try await keychain.copyMatching(query, context: proofContext(request, keychain: caller)))
            }
        case .update(let query, let changes):
            return Self.outcome { () async throws(KeygateError) -> Message in
                try await keychain.update(query, changes: changes, context: proofContext(request, keychain: caller))
                return .done
            }
        case .delete(let query):
            return Self.outcome { () async throws(KeygateError) -> Message in
                try await keychain.delete(query, context: proofContext(request, keychain: caller))
                return .done
            }
        case .lock:
            return lock()
        case .auditShow(let limit):
            return auditReply { trail throws(KeygateError) in .auditRecords(try trail.show(limit: limit)) }
        case .auditVerify:
            return auditReply { trail throws(KeygateError) in
                let (records, problem) = try trail.verify()
                return .auditVerified(records: records, problem: problem)
            }
        case .createKey, .findKeys, .updateKeys, .deleteKeys, .sign, .keyAgreement, .decrypt:
            return keyReply(to: request, keychain: caller)
        }
    }

    /// The reply to a key request: the keeper is this daemon's, so a private half never leaves
    /// it; what goes back is attributes, public halves, signatures and shared secrets.
    private func keyReply(to request: DaemonRequest, keychain caller: CallerKeychain) -> Message {
        let keychain = caller.keychain
        let context = proofContext(request, keychain: caller)
        return Self.outcome { () async throws(KeygateError) -> Message in
            switch request.operation {
            case .createKey(let key, let privateKey):
                if let privateKey {
                    return .keys([try await keychain.importKey(key, privateKey: privateKey, context: context)])
                }
                return .keys([try await keychain.createKey(key, context: context)])
            case .findKeys(let query): return .keys(try await keychain.keys(matching: query))
            case .updateKeys(let query, let changes):
                try await keychain.updateKeys(query, changes: changes)
                return .done
            case .deleteKeys(let query):
                try await keychain.deleteKeys(query)
                return .done
            case .sign(let input, let algorithm, let key):
                return .signature(try await keychain.sign(input, algorithm: algorithm, key: key, context: context))
            case .keyAgreement(let peer, let key):
                return .sharedSecret(try await keychain.sharedSecret(withPeer: peer, key: key, context: context))
            case .decrypt(let message, let algorithm, let key):
                return .plaintext(try await keychain.decrypt(message, algorithm: algorithm, key: key, context: context))
            default:
                throw KeygateError(.internalError, "not a key request")
            }
        }
    }

    /// The context a copyMatching, update, delete or key use runs in: the proofs the daemon remembers
    /// for the caller within the request's window (``DaemonAuthenticator/reuseContext(for:device:)``),
    /// so a request that may not prompt can still be served by them; nil (the keychain's own
    /// fresh context) when there are none.
    private func proofContext(_ request: DaemonRequest, keychain: CallerKeychain) -> AuthenticationContext? {
        keychain.authenticator?.reuseContext(for: request, device: keychain.device)
    }

    /// The reply to `lock`: the caller's reusable proofs are forgotten, then `done`.
    private func lock() -> Message {
        keychains.forgetProofs(of: identity)
        return .done
    }

    /// Runs a facade call on the concurrency pool and waits for it on this connection's thread.
    private static func outcome(_ body: @escaping @Sendable () async throws(KeygateError) -> Message) -> Message {
        Blocking.run { () async -> Message in
            do throws(KeygateError) {
                return try await body()
            } catch {
                return Message(error)
            }
        }
    }
}
