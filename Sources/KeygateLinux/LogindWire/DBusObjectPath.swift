/// Object paths as sd-bus builds them from labels (`sd_bus_path_encode`).
enum DBusObjectPath {
    /// `prefix` + "/" + `label` escaped: every byte but ASCII letters, and digits after the
    /// first byte, becomes `_` and two lowercase hex digits; an empty label is `_`.
    static func encode(_ prefix: String, _ label: String) -> String {
        guard !label.isEmpty else { return prefix + "/_" }
        let hex = Array("0123456789abcdef".utf8)
        var out = Array(prefix.utf8) + [UInt8(ascii: "/")]
        for (index, byte) in label.utf8.enumerated() {
            let letter = (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A)
            if letter || (index > 0 && byte >= 0x30 && byte <= 0x39) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "_"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
