import Glibc

/// Tells whether a PAM service is configured, so that a missing service is reported as
/// unavailable by name instead of falling through to the "other" stack as a plain failure.
enum PAMServiceLocator {
    /// The directories libpam reads service files from, in order.
    static func directories(library: PAMLibrary) -> [String] {
        if library.isWrapperActive, let dir = getenv("PAM_WRAPPER_SERVICE_DIR") {
            return [String(cString: dir)]
        }
        return ["/etc/pam.d", "/usr/lib/pam.d", "/usr/share/pam.d"]
    }

    /// The path of the service file, or nil when no directory has one.
    static func locate(_ service: String, library: PAMLibrary) -> String? {
        guard !service.isEmpty, !service.contains("/"), service != ".", service != ".." else { return nil }
        for directory in directories(library: library) {
            let path = directory + "/" + service
            if access(path, F_OK) == 0 { return path }
        }
        return nil
    }
}
