import Foundation

/// Who this process is, for audit records and program-scoped policy rules.
public enum CurrentProcess {
    /// The resolved path of this process's executable (`/proc/self/exe`), or nil when it
    /// cannot be read.
    public static let executable: String? = {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            return nil
        }
        return (target as NSString).resolvingSymlinksInPath
    }()
}
