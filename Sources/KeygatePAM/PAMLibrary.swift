public import KeygatePolicy

/// Which libpam Keygate talks to.
///
/// ``system`` is the system libpam (`libpam.so.0`, opened at the first transaction), reading
/// `/etc/pam.d`. Tests use ``load(_:)`` with `libpam_wrapper.so` (Debian `libpam-wrapper`),
/// after setting `PAM_WRAPPER=1` and `PAM_WRAPPER_SERVICE_DIR`, so every transaction reads a
/// throwaway service directory instead; ``isWrapperActive`` tells whether that took effect.
public struct PAMLibrary: Sendable, CustomStringConvertible {
    let functions: PAMFunctions
    /// The library's name, for messages.
    public let name: String

    /// The system libpam, opened at the first transaction; when it cannot be opened, every
    /// transaction ends unavailable (`PAM_SYSTEM_ERR`).
    public static let system = PAMLibrary(functions: .linked, name: "libpam")

    /// Loads a PAM implementation from a shared library, such as `libpam_wrapper.so`.
    /// - Throws: ``KeygatePolicy/KeygateError`` with `errSecNotAvailable` naming the library, its
    ///   cause ``KeygatePolicy/KeygateError/Condition/libraryNotLoaded``.
    public static func load(_ path: String) throws(KeygateError) -> PAMLibrary {
        switch PAMFunctions.load(path: path) {
        case .success(let functions): return PAMLibrary(functions: functions, name: path)
        case .failure(let error): throw KeygateError(.notAvailable, error.message, condition: .libraryNotLoaded)
        }
    }

    /// True when this is pam_wrapper and it is redirecting to a test service directory.
    public var isWrapperActive: Bool { functions.wrapperEnabled?() ?? false }

    /// The name.
    public var description: String { name }
}
