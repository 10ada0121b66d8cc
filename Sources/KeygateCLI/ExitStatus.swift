import KeygatePolicy

/// The exit codes of `keygate`, a contract other tools rely on.
enum ExitStatus: Int32 {
    case success = 0
    case failure = 1
    case usage = 2
    case itemNotFound = 3
    case duplicateItem = 4
    case authFailed = 5
    case userCanceled = 6
    case interactionNotAllowed = 7
    case param = 8
    case decode = 9
    case deniedByPolicy = 10

    /// The exit code for a failure with `status`.
    init(status: KeygateStatus) {
        switch status {
        case .itemNotFound: self = .itemNotFound
        case .duplicateItem: self = .duplicateItem
        case .authFailed: self = .authFailed
        case .userCanceled: self = .userCanceled
        case .interactionNotAllowed: self = .interactionNotAllowed
        case .param: self = .param
        case .decode: self = .decode
        case .deniedByPolicy: self = .deniedByPolicy
        default: self = .failure
        }
    }
}
