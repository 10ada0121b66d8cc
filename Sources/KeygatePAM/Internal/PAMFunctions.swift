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

    /// The libpam this program is linked with; when pam_wrapper was preloaded (LD_PRELOAD), its
    /// `pam_wrapper_enabled` is found too, so the service directory it reads can be told.
    static let linked = PAMFunctions(
        start: { pam_start($0, $1, $2, $3) }, authenticate: { pam_authenticate($0, $1) },
        acctMgmt: { pam_acct_mgmt($0, $1) }, end: { pam_end($0, $1) },
        setItem: { pam_set_item($0, $1, $2) }, strerror: { pam_strerror($0, $1) },
        wrapperEnabled: dlopen(nil, RTLD_NOW).flatMap { dlsym($0, "pam_wrapper_enabled") }.map {
            unsafeBitCast($0, to: WrapperEnabled.self)
        })

    /// The table of a shared library loaded with `dlopen`, or an error naming what is missing.
    struct LoadError: Error {
        let message: String
    }

    static func load(path: String) -> Result<PAMFunctions, LoadError> {
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
            return .failure(LoadError(message: "cannot load \(path): \(reason)"))
        }
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            dlsym(handle, name).map { unsafeBitCast($0, to: type) }
        }
        guard let start = symbol("pam_start", as: Start.self),
            let authenticate = symbol("pam_authenticate", as: Step.self),
            let acctMgmt = symbol("pam_acct_mgmt", as: Step.self),
            let end = symbol("pam_end", as: Step.self),
            let setItem = symbol("pam_set_item", as: SetItem.self),
            let strerror = symbol("pam_strerror", as: StrError.self)
        else {
            return .failure(LoadError(message: "\(path) does not export the PAM application functions"))
        }
        return .success(
            PAMFunctions(
                start: start, authenticate: authenticate, acctMgmt: acctMgmt, end: end, setItem: setItem,
                strerror: strerror, wrapperEnabled: symbol("pam_wrapper_enabled", as: WrapperEnabled.self)))
    }
}
