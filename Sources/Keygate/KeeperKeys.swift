public import KeygateItems
public import KeygateKeys
public import KeygatePolicy

/// Keys held by the keeper in CryptoKit's `SecureEnclave.P256` shape (spec §9.10): made with an
/// access control, restored from a `dataRepresentation`, used with `signature(for:)` and
/// `sharedSecretFromKeyAgreement(with:)`, each use gated by the key's access control through
/// the keychain given (either mode's ``KeygateItems/KeychainAccess``).
///
/// Unlike the enclave's wrapped blob, ``KeeperPrivateKey/dataRepresentation`` holds
/// no key material at all: it names the key (its access group and application label) for the
/// keychain that keeps it, which still decides every use.
///
/// ```swift
/// let key = try await KeeperP256.Signing.PrivateKey(
///     accessControl: try AccessControl(protection: .whenUnlockedThisDeviceOnly, flags: [.privateKeyUsage, .userPresence]),
///     label: "payments", in: keychain)
/// let signature = try await key.signature(for: Array("order 42".utf8))
/// ```
public enum KeeperP256 {
    /// P-256 signing keys.
    public enum Signing {
        /// A P-256 signing key held by the keeper.
        public struct PrivateKey: KeeperPrivateKey {
            /// The key as the keychain knows it.
            public let handle: KeeperKeyHandle
            /// The public half.
            public let publicKey: PublicKey

            /// A key from its handle and public half (``KeeperPrivateKey``'s initialisers make them).
            public init(handle: KeeperKeyHandle, publicKey: PublicKey) {
                self.handle = handle
                self.publicKey = publicKey
            }

            /// Signs `data` (SHA-256, ECDSA) once the key's access control allows it.
            public func signature(for data: [UInt8], context: AuthenticationContext? = nil) async throws(KeygateError)
                -> ECDSASignature
            {
                try ECDSASignature(
                    der: try await handle.keychain.sign(
                        data, algorithm: .ecdsaSignatureMessageX962SHA256, key: handle.query, context: context))
            }
        }
    }

    /// P-256 key-agreement keys.
    public enum KeyAgreement {
        /// A P-256 key-agreement key held by the keeper.
        public struct PrivateKey: KeeperPrivateKey {
            /// The key as the keychain knows it.
            public let handle: KeeperKeyHandle
            /// The public half.
            public let publicKey: PublicKey

            /// A key from its handle and public half (``KeeperPrivateKey``'s initialisers make them).
            public init(handle: KeeperKeyHandle, publicKey: PublicKey) {
                self.handle = handle
                self.publicKey = publicKey
            }

            /// The 32-byte shared secret with `peer`, once the key's access control allows `ock`.
            public func sharedSecretFromKeyAgreement(with peer: PublicKey, context: AuthenticationContext? = nil)
                async throws(KeygateError) -> SecretData
            {
                try await handle.keychain.sharedSecret(withPeer: peer.bytes, key: handle.query, context: context)
            }
        }
    }
}

/// A keeper-held P-256 private key in CryptoKit's shape: made in a keychain's keeper, or
/// restored from its ``dataRepresentation``.
public protocol KeeperPrivateKey: Sendable {
    /// The key as the keychain knows it.
    var handle: KeeperKeyHandle { get }
    /// The public half.
    var publicKey: PublicKey { get }
    /// A key from its handle and public half.
    init(handle: KeeperKeyHandle, publicKey: PublicKey)
}

extension KeeperPrivateKey {
    /// Makes a key in `keychain`'s keeper. The default access control is CryptoKit's:
    /// `afterFirstUnlockThisDeviceOnly`, no flags (every use allowed, 9.5.4).
    public init(
        accessControl: AccessControl? = nil, label: String? = nil, accessGroup: String? = nil,
        in keychain: any KeychainAccess
    ) async throws(KeygateError) {
        let (handle, publicKey) = try await KeeperKeyHandle.make(
            .p256, accessControl: accessControl, label: label, accessGroup: accessGroup, in: keychain)
        self.init(handle: handle, publicKey: publicKey)
    }

    /// The key `dataRepresentation` names, in `keychain`.
    /// - Throws: `errSecParam` for bytes that are no handle; `errSecItemNotFound` when
    ///   `keychain` keeps no such key.
    public init(dataRepresentation: [UInt8], in keychain: any KeychainAccess) async throws(KeygateError) {
        let (handle, publicKey) = try await KeeperKeyHandle.restore(dataRepresentation, in: keychain)
        self.init(handle: handle, publicKey: publicKey)
    }

    /// The handle's bytes, to keep and restore the key with (no key material).
    public var dataRepresentation: [UInt8] { handle.bytes }
}

/// What names a keeper key to the keychain that keeps it: its access group and application
/// label. Its bytes are `kgkh1`, the group's length (one byte) and bytes, then the 20-byte label.
public struct KeeperKeyHandle: Sendable {
    /// The keychain the key lives in.
    public let keychain: any KeychainAccess
    /// The key's access group.
    public let accessGroup: String
    /// The key's application label (SHA-1 of its public key).
    public let applicationLabel: [UInt8]

    private static let magic = Array("kgkh1".utf8)

    /// The query naming exactly this key.
    var query: KeyQuery { KeyQuery(applicationLabel: applicationLabel, accessGroup: accessGroup) }

    /// The handle's bytes.
    public var bytes: [UInt8] {
        Self.magic + [UInt8(accessGroup.utf8.count)] + Array(accessGroup.utf8) + applicationLabel
    }

    static func make(
        _ type: KeyType, accessControl: AccessControl?, label: String?, accessGroup: String?,
        in keychain: any KeychainAccess
    ) async throws(KeygateError) -> (KeeperKeyHandle, PublicKey) {
        let protection: ItemProtection =
            accessControl.map { .accessControl($0) } ?? .accessible(.afterFirstUnlockThisDeviceOnly)
        let fields = try await keychain.createKey(
            NewKeyRequest(type: type, label: label, accessGroup: accessGroup, protection: protection), context: nil)
        return (
            KeeperKeyHandle(
                keychain: keychain, accessGroup: fields.accessGroup, applicationLabel: fields.applicationLabel),
            try PublicKey(type: fields.type, bytes: fields.publicKey)
        )
    }

    static func restore(_ bytes: [UInt8], in keychain: any KeychainAccess) async throws(KeygateError) -> (
        KeeperKeyHandle, PublicKey
    ) {
        guard bytes.starts(with: magic), bytes.count > magic.count else {
            throw KeygateError(.param, "the data representation is not a keeper key handle")
        }
        let length = Int(bytes[magic.count])
        guard bytes.count == magic.count + 1 + length + 20,
            let group = String(validating: bytes[(magic.count + 1)..<(magic.count + 1 + length)], as: UTF8.self)
        else { throw KeygateError(.param, "the data representation is not a keeper key handle") }
        let handle = KeeperKeyHandle(keychain: keychain, accessGroup: group, applicationLabel: Array(bytes.suffix(20)))
        let found = try await keychain.keys(matching: handle.query)
        guard let key = found.first, found.count == 1, key.type == .p256 else {
            throw KeygateError(.itemNotFound, "no P-256 key of this handle in \(group)")
        }
        return (handle, try PublicKey(type: key.type, bytes: key.publicKey))
    }
}
