/// An opaque 32-byte hash of the set of enrolled biometric templates, like Apple's
/// `LADomainStateBiometry.stateHash` (spec §3).
///
/// It changes whenever a template is added or removed. A `biometryCurrentSet` item stores
/// the hash current when it was added and is invalid once the hashes differ. "Nothing
/// enrolled" is represented by the absence of a hash (`nil`), never by a hash value.
/// Stored inline (four words), so copying one never allocates.
public struct EnrollmentSetHash: Hashable, Sendable, CustomStringConvertible {
    private let w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64

    /// Wraps exactly 32 bytes; returns nil for any other length.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 32 else { return nil }
        var words: [UInt64] = [0, 0, 0, 0]
        for (i, byte) in bytes.enumerated() { words[i / 8] = words[i / 8] << 8 | UInt64(byte) }
        (w0, w1, w2, w3) = (words[0], words[1], words[2], words[3])
    }

    /// Parses 64 hexadecimal digits; returns nil for anything else.
    public init?(hex: some StringProtocol) {
        guard hex.utf8.count == 64, let bytes = Hex.bytes(hex) else { return nil }
        self.init(bytes: bytes)
    }

    /// The hash of a set of template identifiers, or nil when the set is empty (nothing enrolled).
    ///
    /// Order and duplicates do not matter. Each identifier is length-prefixed under a
    /// versioned domain tag, so no two different sets share a hash by concatenation.
    /// - Parameters:
    ///   - templateIDs: the enrolled templates (fingers, faces), one identifier each.
    ///   - salt: an optional per-application salt, so different apps see different hashes
    ///     for the same enrollment (as Apple's per-app state hash does).
    public init?(templateIDs: some Sequence<String>, salt: String = "") {
        let sorted = Set(templateIDs).sorted()
        guard !sorted.isEmpty else { return nil }
        var message = LengthPrefixedEncoder(tag: "keygate.enrollment-set.v1")
        for part in [salt] + sorted { message.append(part) }
        self.init(bytes: SHA256.hash(message.bytes))!
    }

    /// The 32 bytes, most significant first.
    public var bytes: [UInt8] {
        [w0, w1, w2, w3].flatMap { word in
            stride(from: 56, through: 0, by: -8).map { UInt8(truncatingIfNeeded: word >> UInt64($0)) }
        }
    }

    /// The 64 lowercase hexadecimal digits.
    public var hex: String { Hex.string(bytes) }

    /// The first eight hex digits followed by an ellipsis, for messages.
    public var shortHex: String { String(hex.prefix(8)) + "…" }

    /// The hexadecimal form.
    public var description: String { hex }
}

extension EnrollmentSetHash: Codable {
    /// Decodes the hexadecimal form.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let hash = EnrollmentSetHash(hex: text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "expected 64 hexadecimal digits"))
        }
        self = hash
    }

    /// Encodes the hexadecimal form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hex)
    }
}
