public import KeygateItems
public import KeygateKeys
public import KeygatePolicy
import Synchronization

/// A keeper for tests: real keys (the software keeper's crypto) under its own token id, each use
/// counted, and failures scripted, so a test can see what the keychain does when the keeper
/// fails (the hardware keeper's busy or lockout errors) and that no use reaches the keeper
/// before the key's access control allowed it.
///
/// ```swift
/// let keeper = SimulatedKeyKeeper()
/// let keychain = Keychain(store: InMemoryItemStore(), accessGroups: ["app"], authenticator: auth,
///                         keeper: keeper)
/// keeper.failNextUse(with: KeygateError(.interactionNotAllowed, "the TPM is busy"))
/// ```
public final class SimulatedKeyKeeper: KeyKeeper {
    /// `keygate.simulated`: keys it made are not the software keeper's.
    public let tokenID = "keygate.simulated"
    private let software = SoftwareKeyKeeper()
    private struct State {
        var uses = 0
        var failures: [KeygateError] = []
    }
    private let state = Mutex(State())

    /// A keeper that succeeds unless told otherwise.
    public init() {}

    /// How many signatures and key agreements the keeper was asked for.
    public var uses: Int { state.withLock { $0.uses } }

    /// Makes the next use (signature or key agreement) fail with `error`.
    public func failNextUse(with error: KeygateError) { state.withLock { $0.failures.append(error) } }

    /// Makes a key.
    public func generate(_ type: KeyType) throws(KeygateError) -> KeptKey { try software.generate(type) }

    /// The public key of `blob`.
    public func publicKey(of blob: SecretData, type: KeyType) throws(KeygateError) -> PublicKey {
        try software.publicKey(of: blob, type: type)
    }

    /// Signs, or fails as scripted; counted either way.
    public func sign(_ input: [UInt8], algorithm: SignatureAlgorithm, with blob: SecretData, type: KeyType)
        throws(KeygateError) -> [UInt8]
    {
        try use()
        return try software.sign(input, algorithm: algorithm, with: blob, type: type)
    }

    /// Agrees a key, or fails as scripted; counted either way.
    public func sharedSecret(with peer: PublicKey, using blob: SecretData, type: KeyType) throws(KeygateError)
        -> SecretData
    {
        try use()
        return try software.sharedSecret(with: peer, using: blob, type: type)
    }

    private func use() throws(KeygateError) {
        let failure = state.withLock { state -> KeygateError? in
            state.uses += 1
            return state.failures.isEmpty ? nil : state.failures.removeFirst()
        }
        if let failure { throw failure }
    }
}
