import Keygate

/// A connection's keychain over its caller's store, with what the daemon uses beside it at each
/// request: the device it reads (one snapshot per request) and the authenticator that relays
/// prompts and remembers proofs.
struct CallerKeychain: Sendable {
    /// The facade over the caller uid's store, for the groups the caller was granted.
    let keychain: Keychain
    /// The device `keychain` reads: ``RequestScopedDevice/begin()`` at each request.
    let device: RequestScopedDevice
    /// The authenticator `keychain` asks, when the connection can relay prompts.
    let authenticator: DaemonAuthenticator?
}
