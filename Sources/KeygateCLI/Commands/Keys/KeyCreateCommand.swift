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
    let label: String
    let flags: String?
    let accessible: String?
    let accessGroup: String?

    init(parsing arguments: ParsedArguments) throws(UsageError) {
        type = try arguments.required(KeyOptions.type, as: KeyType.self)
        label = arguments.required(KeyOptions.label)
        flags = arguments.value(ProtectionOptions.accessControl)
        accessible = arguments.value(KeyOptions.accessible)
        accessGroup = arguments.value(ItemOptions.accessGroup)
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

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        let protection = try protection()
        try await context.withSession(accessGroup: accessGroup) { session throws(KeygateError) in
            let query = KeyOptions.query(label: label, in: session)
            if let existing = try await session.keys(query).first {
                throw KeygateError(
                    .duplicateItem,
                    "a key labelled '\(label)' exists already (\(existing.type), \(existing.applicationLabelHex))")
            }
            let key = try await session.keychain.createKey(
                NewKeyRequest(type: type, label: label, accessGroup: session.accessGroup, protection: protection),
                context: session.context)
            context.console.out(KeyJSON.line(key))
        }
        return .success
    }
}

extension Session {
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
