public import KeygatePolicy

extension PAMAuthenticator.Configuration {
    /// The service file libpam reads for the service that proves `factor`, or nil when no
    /// directory of ``serviceDirectories`` has one (or PAM cannot prove `factor` at all): such a
    /// factor is unavailable, and is reported by the service's name.
    public func serviceFile(for factor: Factor) -> String? {
        switch factor {
        case .passcode: PAMServiceLocator.locate(passcodeService, library: library)
        case .biometry: PAMServiceLocator.locate(biometryService, library: library)
        case .companion, .applicationPassword: nil
        }
    }

    /// The PAM service that proves `factor` (nil for a factor PAM cannot prove).
    public func service(for factor: Factor) -> String? {
        switch factor {
        case .passcode: passcodeService
        case .biometry: biometryService
        case .companion, .applicationPassword: nil
        }
    }

    /// The directories libpam reads service files from, in order (pam_wrapper's own when it is
    /// active).
    public var serviceDirectories: [String] { PAMServiceLocator.directories(library: library) }
}
