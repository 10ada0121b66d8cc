/// A compiled glob pattern: `*` matches any run of characters (including `/` and `.`), `?`
/// exactly one; everything else matches itself. Matching works on UTF-8 bytes.
struct Glob: Hashable, Sendable {
    let pattern: String
    private let bytes: [UInt8]
    /// The literal text before the first wildcard.
    let literalPrefix: String
    /// True when the pattern has no wildcard.
    let isExact: Bool

    init(_ pattern: String) {
        self.pattern = pattern
        self.bytes = Array(pattern.utf8)
        let wildcard = bytes.firstIndex { $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "?") }
        self.isExact = wildcard == nil
        self.literalPrefix = String(decoding: bytes[..<(wildcard ?? bytes.count)], as: UTF8.self)
    }

    /// Whether `text` matches the whole pattern.
    func matches(_ text: String) -> Bool {
        if isExact { return text == pattern }
        let subject = Array(text.utf8)
        do {
            var p = 0
            var s = 0
            var starP = -1
            var starS = 0
            while s < subject.count {
                if p < bytes.count && (bytes[p] == UInt8(ascii: "?") || bytes[p] == subject[s]) {
                    p += 1
                    s += 1
                } else if p < bytes.count && bytes[p] == UInt8(ascii: "*") {
                    starP = p
                    starS = s
                    p += 1
                } else if starP >= 0 {
                    p = starP + 1
                    starS += 1
                    s = starS
                } else {
                    return false
                }
            }
            while p < bytes.count && bytes[p] == UInt8(ascii: "*") { p += 1 }
            return p == bytes.count
        }
    }
}
