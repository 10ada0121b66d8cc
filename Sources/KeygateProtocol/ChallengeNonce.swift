/// The nonce of a connection's ``Message/challenge(nonce:)``, which its `hello` must echo.
///
/// The daemon reads who the caller is (the kernel's peer credentials, a pidfd, the executable)
/// and only then sends the challenge, so a hello carrying it was written after that reading:
/// bytes a process wrote before it `exec`s a granted program (while its identity was still its
/// own) cannot carry it, and are refused (``ProtocolError/challengeMismatch``).
public enum ChallengeNonce {
    /// Bytes of a nonce.
    public static let size = 16

    /// Fresh bytes from the kernel's random source (`SystemRandomNumberGenerator`: `getrandom`
    /// on Linux, which never returns guessable bytes; it stops the process rather than fail).
    public static func fresh() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var nonce: [UInt8] = []
        nonce.reserveCapacity(size)
        for _ in 0..<(size / 8) {
            withUnsafeBytes(of: generator.next() as UInt64) { nonce.append(contentsOf: $0) }
        }
        return nonce
    }

    /// Whether `echoed` is `nonce`, compared in time independent of where they differ.
    public static func matches(_ echoed: [UInt8], _ nonce: [UInt8]) -> Bool {
        guard echoed.count == nonce.count, nonce.count == size else { return false }
        var difference: UInt8 = 0
        for index in 0..<size { difference |= echoed[index] ^ nonce[index] }
        return difference == 0
    }
}
