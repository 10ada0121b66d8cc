public import KeygatePolicy

/// The encrypted backup format of `keygate export` / `keygate import`.
///
/// Layout: the magic `KGBACKUP1`, the Argon2id work factors (operations, memory), a random
/// salt and nonce, then the items sealed with XChaCha20-Poly1305 under a key derived from
/// the passphrase with Argon2id (libsodium `crypto_pwhash`); everything before the ciphertext
/// is its associated data, so a changed header does not open either. The plaintext is built
/// in wiped memory. A wrong passphrase and a damaged file are both `errSecDecode`, and
/// nothing of a backup is used unless all of it opens. A header asking for more than
/// ``maximumOperations`` passes or ``maximumMemory`` bytes is refused (`errSecDecode`) before
/// any key derivation.
public enum BackupArchive {
    /// How hard the passphrase is to guess offline.
    public enum Strength: Sendable {
        /// libsodium's "moderate" limits (3 passes, 256 MiB): for real backups.
        case moderate
        /// libsodium's minimum limits: for tests only.
        case minimumForTests
    }

    /// One item in a backup: its fields and its value.
    public struct Entry: Sendable {
        /// The item's fields.
        public var fields: ItemFields
        /// The item's value.
        public var data: SecretData

        /// An entry.
        public init(fields: ItemFields, data: SecretData) {
            self.fields = fields
            self.data = data
        }
    }

    static let magic = Array("KGBACKUP1".utf8)
    static let payloadMagic = Array("KGITEMS1".utf8)
    /// The most Argon2id passes a backup header may ask for (export writes 3).
    public static let maximumOperations: UInt64 = 10
    /// The most Argon2id memory a backup header may ask for: 256 MiB, what export writes.
    public static let maximumMemory = 256 << 20

    /// Seals `entries` under `passphrase`.
    /// - Throws: `errSecParam` for an empty passphrase; `errSecAllocate` if key derivation runs out of memory.
    public static func seal(_ entries: [Entry], passphrase: SecretData, strength: Strength = .moderate)
        throws(KeygateError) -> [UInt8]
    {
        guard passphrase.count > 0 else { throw KeygateError(.param, "a backup needs a non-empty passphrase") }
        let operations = strength == .moderate ? Sodium.moderateOperations : Sodium.minimumOperations
        let memory = strength == .moderate ? Sodium.moderateMemory : Sodium.minimumMemory
        let salt = Sodium.random(Sodium.saltLength)
        let key = try Sodium.deriveKey(from: passphrase, salt: salt, operations: operations, memory: memory)
        var header = magic
        header += bigEndian(operations)
        header += bigEndian(UInt64(memory))
        header += salt
        let payload = encode(entries)
        let box = try Sodium.seal(payload, key: key, associatedData: header)
        return header + box.nonce + box.ciphertext
    }

    /// Opens a backup.
    /// - Throws: `errSecDecode` when it is not a backup, was changed, or the passphrase is wrong.
    public static func open(_ bytes: [UInt8], passphrase: SecretData) throws(KeygateError) -> [Entry] {
        let headerLength = magic.count + 16 + Sodium.saltLength
        guard bytes.count >= headerLength + Sodium.nonceLength + Sodium.tagLength,
            Array(bytes[0..<magic.count]) == magic
        else { throw KeygateError(.decode, "not a Keygate backup") }
        var reader = ByteReader(bytes: bytes, position: magic.count)
        let operations = try reader.uint64()
        let memory = try reader.uint64()
        // Checked before any key-derivation work: a crafted header must not buy minutes of Argon2id.
        guard operations >= 1, operations <= maximumOperations, memory >= 8192, memory <= UInt64(maximumMemory) else {
            throw KeygateError(
                .decode,
                "the backup's key-derivation parameters are out of range (\(operations) passes over \(memory) bytes; "
                    + "at most \(maximumOperations) passes over \(maximumMemory >> 20) MiB): not a Keygate backup")
        }
        let salt = Array(bytes[reader.position..<reader.position + Sodium.saltLength])
        let header = Array(bytes[0..<headerLength])
        let nonce = Array(bytes[headerLength..<headerLength + Sodium.nonceLength])
        let ciphertext = Array(bytes[(headerLength + Sodium.nonceLength)...])
        let key = try Sodium.deriveKey(from: passphrase, salt: salt, operations: operations, memory: Int(memory))
        let payload: SecretData
        do {
            payload = try Sodium.open(ciphertext, nonce: nonce, key: key, associatedData: header)
        } catch {
            throw KeygateError(
                .decode, "the backup does not open: wrong passphrase, or the file was changed", cause: error.cause)
        }
        return try decode(payload)
    }

    // MARK: - Payload

    private static func encode(_ entries: [Entry]) -> SecretData {
        // Metadata is built in ordinary arrays; values are copied straight into wiped memory.
        var total = payloadMagic.count + 4
        var metadata: [[UInt8]] = []
        for entry in entries {
            var bytes: [UInt8] = []
            let fields = entry.fields
            for text in [fields.identity.accessGroup, fields.identity.account, fields.identity.service] {
                bytes += lengthPrefixed(Array(text.utf8))
            }
            bytes.append(fields.identity.synchronizable ? 1 : 0)
            bytes.append(fields.label == nil ? 0 : 1)
            bytes += lengthPrefixed(Array((fields.label ?? "").utf8))
            bytes.append(fields.generic == nil ? 0 : 1)
            bytes += lengthPrefixed(fields.generic ?? [])
            bytes += lengthPrefixed(Array(fields.accessControl.textForm.utf8))
            bytes += bigEndian(UInt64(bitPattern: fields.created.nanoseconds))
            bytes += bigEndian(UInt64(bitPattern: fields.modified.nanoseconds))
            metadata.append(bytes)
            total += bytes.count + 4 + entry.data.count
        }
        return SecretData(count: total) { buffer in
            var offset = 0
            func put(_ bytes: [UInt8]) {
                for byte in bytes {
                    buffer[offset] = byte
                    offset += 1
                }
            }
            put(payloadMagic)
            put(bigEndian(UInt32(entries.count)))
            for (entry, bytes) in zip(entries, metadata) {
                put(bytes)
                put(bigEndian(UInt32(entry.data.count)))
                entry.data.withUnsafeBytes { value in
                    for byte in value {
                        buffer[offset] = byte
                        offset += 1
                    }
                }
            }
        }
    }

    private static func decode(_ payload: SecretData) throws(KeygateError) -> [Entry] {
        try payload.withUnsafeBytes { (raw: UnsafeRawBufferPointer) throws(KeygateError) -> [Entry] in
            var reader = ByteReader(buffer: raw)
            guard try reader.bytes(payloadMagic.count) == payloadMagic else {
                throw KeygateError(.decode, "the backup's contents are not Keygate items")
            }
            let count = try reader.uint32()
            var entries: [Entry] = []
            for _ in 0..<count {
                let group = try reader.text()
                let account = try reader.text()
                let service = try reader.text()
                let sync = try reader.byte() == 1
                let hasLabel = try reader.byte() == 1
                let label = try reader.text()
                let hasGeneric = try reader.byte() == 1
                let generic = try reader.lengthPrefixed()
                let controlText = try reader.text()
                let created = Timestamp(nanoseconds: Int64(bitPattern: try reader.uint64()))
                let modified = Timestamp(nanoseconds: Int64(bitPattern: try reader.uint64()))
                let valueLength = Int(try reader.uint32())
                let data = try reader.secret(valueLength)
                let control = try AccessControl(textForm: controlText)
                entries.append(
                    Entry(
                        fields: ItemFields(
                            identity: ItemIdentity(
                                accessGroup: group, account: account, service: service, synchronizable: sync),
                            label: hasLabel ? label : nil, generic: hasGeneric ? generic : nil, accessControl: control,
                            created: created, modified: modified),
                        data: data))
            }
            guard reader.atEnd else { throw KeygateError(.decode, "the backup has trailing bytes") }
            return entries
        }
    }

    private static func lengthPrefixed(_ bytes: [UInt8]) -> [UInt8] { bigEndian(UInt32(bytes.count)) + bytes }

    private static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        (0..<(T.bitWidth / 8)).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
}

/// Reads big-endian fields from bytes, failing with `errSecDecode` past the end.
private struct ByteReader {
    private let read: (Int) -> UInt8
    private let count: Int
    private(set) var position: Int
    private let buffer: UnsafeRawBufferPointer?

    init(bytes: [UInt8], position: Int) {
        read = { bytes[$0] }
        count = bytes.count
        self.position = position
        buffer = nil
    }

    init(buffer: UnsafeRawBufferPointer) {
        read = { buffer[$0] }
        count = buffer.count
        position = 0
        self.buffer = buffer
    }

    var atEnd: Bool { position == count }

    mutating func byte() throws(KeygateError) -> UInt8 {
        guard position < count else { throw KeygateError(.decode, "the backup is truncated") }
        defer { position += 1 }
        return read(position)
    }

    mutating func bytes(_ length: Int) throws(KeygateError) -> [UInt8] {
        guard length >= 0, length <= count - position else { throw KeygateError(.decode, "the backup is truncated") }
        var result: [UInt8] = []
        result.reserveCapacity(length)
        for _ in 0..<length { result.append(try byte()) }
        return result
    }

    mutating func uint32() throws(KeygateError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 { value = value << 8 | UInt32(try byte()) }
        return value
    }

    mutating func uint64() throws(KeygateError) -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(try byte()) }
        return value
    }

    mutating func lengthPrefixed() throws(KeygateError) -> [UInt8] { try bytes(Int(try uint32())) }

    mutating func text() throws(KeygateError) -> String {
        let raw = try lengthPrefixed()
        guard let text = String(validating: raw, as: UTF8.self) else {
            throw KeygateError(.decode, "bad text in the backup")
        }
        return text
    }

    /// A value copied straight into wiped memory.
    mutating func secret(_ length: Int) throws(KeygateError) -> SecretData {
        guard length >= 0, length <= count - position, let buffer else {
            throw KeygateError(.decode, "the backup is truncated")
        }
        let start = position
        position += length
        return SecretData(bytes: UnsafeRawBufferPointer(rebasing: buffer[start..<start + length]))
    }
}
