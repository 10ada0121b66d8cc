import KeygateItems
import KeygatePolicy

/// `keygate key create`: a random key made inside the keeper.
struct KeyCreateCommand: Command {
    static let configuration = KeyCommand.subcommand(
        "create", summary: "make a key inside the keeper",
        options: [
            KeyOptions.type, KeyOptions.label, ProtectionOptions.accessControl, KeyOptions.accessible,
            ItemOptions.accessGroup,
        ])

    let type: KeyType
    let target: KeyTarget
    let protection: KeyProtectionOptions

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        type = try arguments.required(KeyOptions.type, as: KeyType.self)
        target = KeyTarget(arguments)
        protection = KeyProtectionOptions(arguments)
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        let protection = try protection.protection()
        try await context.withSession(accessGroup: target.accessGroup) { session throws(KeygateError) in
            try await session.refuseTakenLabel(target.label)
            let key = try await session.keychain.createKey(
                NewKeyRequest(
                    type: type, label: target.label, accessGroup: session.accessGroup, protection: protection),
                context: session.context)
            context.console.out(KeyJSON.line(key))
        }
        return .success
    }
}

/// `--access-control` and `--accessible` for a new key.
struct KeyProtectionOptions: Sendable {
    let flags: String?
    let accessible: String?

    init(_ arguments: ParsedArguments) {
        flags = arguments.value(ProtectionOptions.accessControl)
        accessible = arguments.value(KeyOptions.accessible)
    }

    /// The key's protection: the class alone (every use allowed while it is available), or the
    /// flags with `privateKeyUsage` added.
    func protection() throws(KeygateError) -> ItemProtection {
        let protection =
            try accessible.map { (text: String) throws(KeygateError) in try ProtectionClass(parsing: text) }
            ?? .whenUnlockedThisDeviceOnly
        guard let flags else { return .accessible(protection) }
        var parsed = try AccessControlFlags(parsing: flags)
        parsed.insert(.privateKeyUsage)
        return .accessControl(try AccessControl(protection: protection, flags: parsed))
    }
}

extension Session {
    /// Refuses a label a key of this session's group has already (one key a label).
    func refuseTakenLabel(_ label: String) async throws(KeygateError) {
        if let existing = try await keys(KeyOptions.query(label: label, in: self)).first {
            throw KeygateError(
                .duplicateItem,
                "a key labelled '\(label)' exists already (\(existing.type), \(existing.applicationLabelHex))")
        }
    }

    /// The keys `query` matches; none is an empty list, not an error.
    func keys(_ query: KeyQuery) async throws(KeygateError) -> [KeyFields] {
        do {
            return try await keychain.keys(matching: query)
        } catch  where error.status == .itemNotFound {
            return []
        }
    }

    /// The one key labelled `label`.
    /// - Throws: `errSecItemNotFound` naming the label when there is none.
    func key(labelled label: String) async throws(KeygateError) -> KeyFields {
        guard let key = try await keys(KeyOptions.query(label: label, in: self)).first else {
            throw KeygateError(.itemNotFound, "no key labelled '\(label)' in \(accessGroup)")
        }
        return key
    }
}
