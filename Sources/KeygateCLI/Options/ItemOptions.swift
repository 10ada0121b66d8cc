import Keygate
import KeygatePolicy
import KeygateStore

/// `--service`, `--account` and `--access-group`: the item a command works on (both names
/// required).
struct ItemOptions: Sendable {
    static let service = OptionSpec("service", short: "s", .text("S"), required: true, help: "the item's service")
    static let account = OptionSpec("account", short: "a", .text("A"), required: true, help: "the item's account")
    static let accessGroup = OptionSpec(
        "access-group", short: "g", .text("G"), help: "the access group (default: keygate)")
    static let options = [service, account, accessGroup]

    /// The item's service.
    let service: String
    /// The item's account.
    let account: String
    /// The access group an option names, or nil for `keygate`.
    let accessGroup: String?

    /// Reads the group's options (the parser has checked the required ones).
    init(_ arguments: ParsedArguments) {
        service = arguments.required(Self.service)
        account = arguments.required(Self.account)
        accessGroup = arguments.value(Self.accessGroup)
    }

    /// The query for this item in `session`'s access group.
    func query(in session: Session) -> ItemQuery {
        ItemQuery(service: service, account: account, accessGroup: session.accessGroup)
    }
}

/// A command whose only options are ``ItemOptions``.
protocol ItemCommand: Command {
    /// The item the command works on.
    var item: ItemOptions { get }
    /// The command for `item`.
    init(item: ItemOptions)
}

extension ItemCommand {
    /// Reads ``ItemOptions``.
    init(parsing arguments: ParsedArguments) {
        self.init(item: ItemOptions(arguments))
    }
}

/// `--service`, `--account` and `--access-group` as a filter: each narrows what `list` shows.
struct ItemFilterOptions: Sendable {
    static let service = OptionSpec("service", short: "s", .text("S"), help: "only this service")
    static let account = OptionSpec("account", short: "a", .text("A"), help: "only this account")
    static let options = [service, account, ItemOptions.accessGroup]

    /// Only items of this service, when given.
    let service: String?
    /// Only items of this account, when given.
    let account: String?
    /// The access group an option names, or nil for `keygate`.
    let accessGroup: String?

    /// Reads the group's options.
    init(_ arguments: ParsedArguments) {
        service = arguments.value(Self.service)
        account = arguments.value(Self.account)
        accessGroup = arguments.value(ItemOptions.accessGroup)
    }
}

/// `--accessible` and `--access-control`: the protection an item is given (or evaluated with).
struct ProtectionOptions: Sendable {
    static let accessible = OptionSpec(
        "accessible", .text("CLASS"), help: "protection class, e.g. whenUnlockedThisDeviceOnly (default: whenUnlocked)")
    static let accessControl = OptionSpec(
        "access-control", .text("FLAGS"), help: "comma-separated flags, e.g. biometryAny,devicePasscode,or")
    static let options = [accessible, accessControl]

    /// `--accessible`, as typed.
    let accessible: String?
    /// `--access-control`, as typed.
    let accessControl: String?

    /// Reads the group's options.
    init(_ arguments: ParsedArguments) {
        accessible = arguments.value(Self.accessible)
        accessControl = arguments.value(Self.accessControl)
    }

    /// Whether either option was given.
    var isGiven: Bool { accessible != nil || accessControl != nil }

    /// The class `--accessible` names, or nil.
    /// - Throws: `errSecParam` naming the word when it is no class.
    func protectionClass() throws(KeygateError) -> ProtectionClass? {
        try accessible.map { (text: String) throws(KeygateError) in try ProtectionClass(parsing: text) }
    }

    /// The access control the options describe: the class (default `whenUnlocked`) with the
    /// flags (default none).
    /// - Throws: `errSecParam` naming the word for an unknown class or flag.
    func accessControlValue() throws(KeygateError) -> AccessControl {
        let flags =
            try accessControl.map { (text: String) throws(KeygateError) in try AccessControlFlags(parsing: text) }
            ?? []
        return try AccessControl(protection: protectionClass() ?? .default, flags: flags)
    }

    /// The protection an added item gets: an access control when flags are given (with the
    /// class, default `whenUnlocked`), else the class alone.
    /// - Throws: `errSecParam` naming the word for an unknown class or flag.
    func itemProtection() throws(KeygateError) -> ItemProtection {
        let protection = try protectionClass()
        guard let flags = accessControl else { return .accessible(protection ?? .default) }
        return .accessControl(
            try AccessControl(protection: protection ?? .default, flags: AccessControlFlags(parsing: flags)))
    }
}
