import FoundationEssentials
import KeygateItems

extension PublicKey {
    /// The OpenSSH key type name: `ecdsa-sha2-nistp256` or `ssh-ed25519`.
    public var openSSHType: String {
        switch type {
        case .p256: "ecdsa-sha2-nistp256"
        case .ed25519: "ssh-ed25519"
        }
    }

    /// The OpenSSH public key blob (RFC 5656 §3.1, RFC 8709 §4): the key as the SSH agent
    /// protocol and `authorized_keys` carry it.
    public var openSSHBlob: [UInt8] {
        var writer = SSHWireWriter()
        writer.string(openSSHType)
        switch type {
        case .p256:
            writer.string("nistp256")
            writer.bytes(bytes)
        case .ed25519:
            writer.bytes(bytes)
        }
        return writer.output
    }

    /// One `authorized_keys` line: `TYPE BASE64 COMMENT` (the comment left out when empty; any
    /// line break in it becomes a space, so the line stays one line).
    public func openSSH(comment: String = "") -> String {
        let line = openSSHType + " " + Data(openSSHBlob).base64EncodedString()
        let flat = String(comment.map { $0.isNewline ? " " : $0 })
        return flat.isEmpty ? line : line + " " + flat
    }

    /// The DER SubjectPublicKeyInfo (RFC 5480 for P-256, RFC 8410 for Ed25519).
    public var subjectPublicKeyInfo: [UInt8] {
        switch type {
        case .p256: P256.subjectPublicKeyInfoPrefix + bytes
        case .ed25519: Ed25519.subjectPublicKeyInfoPrefix + bytes
        }
    }

    /// The PEM `PUBLIC KEY` block of ``subjectPublicKeyInfo``, as `openssl pkey -pubout` writes it.
    public var pem: String {
        let encoded = Array(Data(subjectPublicKeyInfo).base64EncodedString().utf8)
        var lines = ["-----BEGIN PUBLIC KEY-----"]
        var start = 0
        while start < encoded.count {
            let end = min(start + 64, encoded.count)
            lines.append(String(decoding: encoded[start..<end], as: UTF8.self))
            start = end
        }
        lines.append("-----END PUBLIC KEY-----")
        return lines.joined(separator: "\n") + "\n"
    }
}
