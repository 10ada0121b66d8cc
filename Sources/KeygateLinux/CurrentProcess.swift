import Glibc

/// Who this process is, for audit records and program-scoped policy rules.
public enum CurrentProcess {
    /// The resolved path of this process's executable (`/proc/self/exe`), or nil when it
    /// cannot be read.
    ///
    /// The link's target is the kernel's own path of the executable, absolute and without
    /// symbolic links, so one `readlink` gives what `realpath` found with one per component;
    /// `realpath` still decides when the target is not such a path (an executable deleted
    /// since it started shows as `… (deleted)`, which does not resolve: nil).
    public static let executable: String? = {
        let capacity = Int(PATH_MAX)
        let target: String? = withUnsafeTemporaryAllocation(of: CChar.self, capacity: capacity) { buffer in
            let length = readlink("/proc/self/exe", buffer.baseAddress!, capacity)
            guard length > 0, length < capacity, buffer[0] == CChar(UInt8(ascii: "/")) else { return nil }
            return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress, count: length), as: UTF8.self)
        }
        if let target, !target.hasSuffix(" (deleted)") { return target }
        guard let resolved = realpath("/proc/self/exe", nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }()
}
