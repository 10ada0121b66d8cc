internal import CPAM
import Glibc

/// The libpam entry points Keygate calls, as a table: production uses the linked libpam;
/// tests load `libpam_wrapper.so` at run time and get the same calls redirected to a
/// throwaway service directory, with no LD_PRELOAD and no /etc/pam.d edits.
struct PAMFunctions: @unchecked Sendable {
    typealias Start =
        @convention(c) (
            UnsafePointer<CChar>, UnsafePointer<CChar>?, UnsafePointer<pam_conv>,
            UnsafeMutablePointer<OpaquePointer?>
        ) -> Int32
    typealias Step = @convention(c) (OpaquePointer, Int32) -> Int32
    typealias SetItem = @convention(c) (OpaquePointer, Int32, UnsafeRawPointer?) -> Int32
    typealias StrError = @convention(c) (OpaquePointer, Int32) -> UnsafePointer<CChar>?
    typealias WrapperEnabled = @convention(c) () -> Bool

    let start: Start
    let authenticate: Step
    let acctMgmt: Step
    let end: Step
    let setItem: SetItem
    let strerror: StrError
    let wrapperEnabled: WrapperEnabled?

    /// The system libpam, opened at the first PAM transaction rather than linked: a command
    /// that never authenticates (a plain `keygate get`) does not pay for loading libpam and its
    /// dependencies (libaudit, libcap-ng) at start-up. It is opened `RTLD_GLOBAL` and each
    /// function is then looked up in the global scope, as the dynamic linker bound the linked
    /// calls: a pam_wrapper preloaded with `LD_PRELOAD` comes first and intercepts them, and
    /// modules find libpam's own functions (`pam_get_user`, `pam_modutil_*`) where they found
    /// them before. When libpam cannot be loaded, `start` fails with `PAM_SYSTEM_ERR` (the factor
    /// is unavailable, never proved).
    static let linked: PAMFunctions = {
        guard dlopen("libpam.so.0", RTLD_NOW | RTLD_GLOBAL) != nil, let global = dlopen(nil, RTLD_NOW) else {
            return unavailable
        }
        return table { dlsym(global, $0) } ?? unavailable
    }()

    /// The table of the functions `lookup` finds by name, or nil when one of the six is missing
    /// (`pam_wrapper_enabled` is optional).
    private static func table(_ lookup: (String) -> UnsafeMutableRawPointer?) -> PAMFunctions? {
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            lookup(name).map { unsafeBitCast($0, to: type) }
        }
        guard let start = symbol("pam_start", as: Start.self),
            let authenticate = symbol("pam_authenticate", as: Step.self),
            let acctMgmt = symbol("pam_acct_mgmt", as: Step.self),
            let end = symbol("pam_end", as: Step.self),
            let setItem = symbol("pam_set_item", as: SetItem.self),
            let strerror = symbol("pam_strerror", as: StrError.self)
        else { return nil }
        return PAMFunctions(
            start: start, authenticate: authenticate, acctMgmt: acctMgmt, end: end, setItem: setItem,
            strerror: strerror, wrapperEnabled: symbol("pam_wrapper_enabled", as: WrapperEnabled.self))
    }

    /// The table used when libpam cannot be loaded: every transaction ends at `pam_start`
    /// with `PAM_SYSTEM_ERR` and no handle.
    static let unavailable = PAMFunctions(
        start: { _, _, _, handle in
            handle.pointee = nil
            return PAM_SYSTEM_ERR
        }, authenticate: { _, _ in PAM_SYSTEM_ERR }, acctMgmt: { _, _ in PAM_SYSTEM_ERR },
        end: { _, _ in PAM_SUCCESS }, setItem: { _, _, _ in PAM_SYSTEM_ERR }, strerror: { _, _ in nil },
        wrapperEnabled: nil)

    /// The table of a shared library loaded with `dlopen`, or an error naming what is missing.
    struct LoadError: Error {
        let message: String
    }

    static func load(path: String) -> Result<PAMFunctions, LoadError> {
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
            return .failure(LoadError(message: "cannot load \(path): \(reason)"))
        }
        guard let functions = table({ dlsym(handle, $0) }) else {
            return .failure(LoadError(message: "\(path) does not export the PAM application functions"))
        }
        return .success(functions)
    }
}
