import Glibc

/// Who this process is, for audit records and program-scoped policy rules.
public enum CurrentProcess {
    /// The resolved path of this process's executable (`/proc/self/exe`), or nil when it
    /// cannot be read.
    public static let executable: String? = {
        guard let resolved = realpath("/proc/self/exe", nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }()
}
