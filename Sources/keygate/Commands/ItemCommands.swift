import FoundationEssentials
import Glibc
import Keygate
import KeygatePolicy
import KeygateStore

/// `keygate add | get | update | delete | list`: the item commands over the embedded store.
enum ItemCommands {
    static let itemOptions: [Arguments.Option] = [
        .init(name: "service", short: "s", value: "S", help: "the item's service (required)"),
        .init(name: "account", short: "a", value: "A", help: "the item's account (required)"),
        .init(name: "access-group", short: "g", value: "G", help: "the access group (default: keygate)"),
    ]

    static let addHelp = """
        usage: keygate add --service S --account A [--access-group G] [--label L]
                           [--accessible CLASS] [--access-control FLAGS]

        Adds an item whose value is read from standard input, byte for byte; from a terminal it
        is asked twice with echo off (the line typed, without its newline). CLASS is Apple's
        name without the prefix (whenUnlockedThisDeviceOnly); FLAGS is a comma-separated list of
        Apple's flag names (biometryAny,devicePasscode,or). Exit 4 when the item exists.

        \(Arguments.helpLines(itemOptions + addOptions))
        """
    static let addOptions: [Arguments.Option] = [
        .init(name: "label", value: "L", help: "a label"),
        .init(name: "accessible", value: "CLASS", help: "protection class (default: whenUnlocked)"),
        .init(name: "access-control", value: "FLAGS", help: "access-control flags"),
    ]

    static let getOptions = itemOptions + [.init(name: "prompt", value: "TEXT", help: "why the user is asked")]

    static let getHelp = """
        usage: keygate get --service S --account A [--access-group G] [--prompt TEXT]

        Writes the item's value to standard output, byte for byte, after the access control
        allows it (asking for a proof through PAM when needed); a newline is added only when
        standard output is a terminal. Exit 3 when there is no such item, 5 when authentication
        failed, 6 when cancelled, 7 when locked or not allowed to ask.

        \(Arguments.helpLines(getOptions))
        """

    static let updateHelp = """
        usage: keygate update --service S --account A [--access-group G]

        Replaces the item's value with standard input, byte for byte, or with the line typed
        twice at a hidden prompt when standard input is a terminal (a protected item asks for a
        proof first).

        \(Arguments.helpLines(itemOptions))
        """

    static let deleteHelp = """
        usage: keygate delete --service S --account A [--access-group G]

        Deletes the item. No proof is needed (Apple's odel(true)). Exit 3 when there is none.

        \(Arguments.helpLines(itemOptions))
        """

    static let listOptions: [Arguments.Option] = [
        .init(name: "service", short: "s", value: "S", help: "only this service"),
        .init(name: "account", short: "a", value: "A", help: "only this account"),
        .init(name: "access-group", short: "g", value: "G", help: "the access group (default: keygate)"),
    ]

    static let listHelp = """
        usage: keygate list [--service S] [--account A] [--access-group G]

        Prints one JSON object a line per item: its attributes, never its value. Never asks
        for a proof. Non-ASCII characters are written as \\uXXXX escapes, so names that differ
        only in their bytes (NFC and NFD forms) are told apart.

        \(Arguments.helpLines(listOptions))
        """

    @Sendable static func add(_ global: GlobalOptions, _ words: ArraySlice<String>) async -> ExitStatus {
        await run(words, options: itemOptions + addOptions, help: addHelp, global: global) { arguments, session in
            let protection = try protection(arguments)
            let value = try readValue(global, arguments)
            try await session.keychain.add(
                AddRequest(
                    service: try arguments.required("service"), account: try arguments.required("account"),
                    label: arguments.values["label"], protection: protection, data: value),
                context: session.context)
        }
    }

    /// The protection `--accessible` and `--access-control` ask for: an access control when
    /// flags are given (with the class, default `whenUnlocked`), else the class alone.
    static func protection(_ arguments: Arguments) throws(KeygateError) -> ItemProtection {
        let protection = try arguments.values["accessible"].map { (text: String) throws(KeygateError) in
            try ProtectionClass(parsing: text)
        }
        guard let flags = arguments.values["access-control"] else { return .accessible(protection ?? .default) }
        return .accessControl(
            try AccessControl(protection: protection ?? .default, flags: AccessControlFlags(parsing: flags)))
    }

    @Sendable static func get(_ global: GlobalOptions, _ words: ArraySlice<String>) async -> ExitStatus {
        await run(words, options: getOptions, help: getHelp, global: global) { arguments, session in
            var query = ItemQuery(
                service: try arguments.required("service"), account: try arguments.required("account"),
                accessGroup: session.accessGroup, returnData: true)
            query.operationPrompt = arguments.values["prompt"]
            guard let data = try await session.keychain.copyMatching(query, context: session.context).first?.data else {
                throw KeygateError(.itemNotFound, "no such item")
            }
            var bytes = data.copyBytes()
            defer { SecretData.wipe(&bytes) }
            // A terminal gets the line ended, as a shell prompt expects; a pipe gets the exact bytes.
            if isatty(1) == 1 { bytes.append(0x0a) }
            try StandardStreams.write(bytes)
        }
    }

    @Sendable static func update(_ global: GlobalOptions, _ words: ArraySlice<String>) async -> ExitStatus {
        await run(words, options: itemOptions, help: updateHelp, global: global) { arguments, session in
            let query = ItemQuery(
                service: try arguments.required("service"), account: try arguments.required("account"),
                accessGroup: session.accessGroup)
            let value = try readValue(global, arguments)
            try await session.keychain.update(query, changes: ItemChanges(data: value), context: session.context)
        }
    }

    @Sendable static func delete(_ global: GlobalOptions, _ words: ArraySlice<String>) async -> ExitStatus {
        await run(words, options: itemOptions, help: deleteHelp, global: global) { arguments, session in
            let query = ItemQuery(
                service: try arguments.required("service"), account: try arguments.required("account"),
                accessGroup: session.accessGroup)
            try await session.keychain.delete(query, context: session.context)
        }
    }

    @Sendable static func list(_ global: GlobalOptions, _ words: ArraySlice<String>) async -> ExitStatus {
        await run(words, options: listOptions, required: [], help: listHelp, global: global) { arguments, session in
            var query = ItemQuery(
                service: arguments.values["service"], account: arguments.values["account"],
                accessGroup: session.accessGroup, synchronizable: .any, returnAttributes: true)
            query.matchLimit = .all
            for attributes in try await matches(query, session).compactMap(\.attributes) {
                Console.out(ItemJSON.line(attributes))
            }
        }
    }

    /// The items a query matches; none is an empty list, not an error.
    static func matches(_ query: ItemQuery, _ session: Session) async throws(KeygateError) -> [MatchedItem] {
        do {
            return try await session.keychain.copyMatching(query, context: session.context)
        } catch  where error.status == .itemNotFound {
            return []
        }
    }

    /// Parses `words`, opens a session, runs `body`, and maps errors to exit codes.
    static func run(
        _ words: ArraySlice<String>, options: [Arguments.Option], required: [String] = ["service", "account"],
        positionals: Int = 0, help: String, global: GlobalOptions, _ body: (Arguments, Session) async throws -> Void
    ) async -> ExitStatus {
        let arguments: Arguments
        do throws(Arguments.UsageError) {
            arguments = try Arguments(words, options: options)
            if arguments.wantsHelp {
                Console.out(help)
                return .success
            }
            if arguments.positionals.count > positionals {
                throw Arguments.UsageError(message: "unexpected argument '\(arguments.positionals[positionals])'")
            }
            for name in required { _ = try arguments.required(name) }
        } catch {
            return KeygateCommand.fail(usage: error, help: help)
        }
        do {
            let session = try Session(global, accessGroup: arguments.values["access-group"])
            defer { session.finish() }
            try await body(arguments, session)
            return .success
        } catch let error as KeygateError {
            return KeygateCommand.fail(error)
        } catch let error as Arguments.UsageError {
            return KeygateCommand.fail(usage: error, help: help)
        } catch {
            return KeygateCommand.fail(KeygateError(.internalError, "\(error)"))
        }
    }

    /// The value for `add` and `update`: asked at a hidden prompt when standard input is a
    /// terminal (``TerminalValuePrompt``), else standard input byte for byte.
    static func readValue(_ global: GlobalOptions, _ arguments: Arguments) throws(KeygateError) -> SecretData {
        if isatty(0) == 1 {
            return try TerminalValuePrompt.ask(
                for: "\(arguments.values["service"] ?? "")/\(arguments.values["account"] ?? "")", global: global)
        }
        return try readStandardInput(global)
    }

    /// Standard input, byte for byte, in wiped memory; never more than the store's value limit
    /// (16 MiB) plus one byte is read, so an endless or huge input is refused, not buffered.
    static func readStandardInput(_ global: GlobalOptions) throws(KeygateError) -> SecretData {
        let limit = ItemLimits.defaultMaximumValueLength
        if global.passphraseDescriptor == 0 {
            throw KeygateError(
                .param,
                "--passphrase-fd 0 would read the passphrase from the value's standard input; use another descriptor")
        }
        return try StandardStreams.read(limit: limit, what: "the value")
    }
}

/// The JSON line `keygate list` prints for an item: attributes only.
///
/// Names are bytes, never normalised (as Apple compares them), so `caf\u{E9}` (NFC) and
/// `cafe\u{301}` (NFD) are two items. Every non-ASCII character is written as a `\uXXXX`
/// escape, so the two forms look different on screen while any JSON reader gets the exact
/// string back.
enum ItemJSON {
    static func line(_ attributes: ItemAttributes) -> String {
        asciiOnly(render(attributes))
    }

    /// JSON text with every non-ASCII character escaped (UTF-16 units, as JSON spells them).
    /// Outside strings JSON text is ASCII, so only string contents change.
    static func asciiOnly(_ json: String) -> String {
        var out = ""
        for scalar in json.unicodeScalars {
            if scalar.isASCII {
                out.unicodeScalars.append(scalar)
                continue
            }
            for unit in String(scalar).utf16 {
                let hex = String(unit, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return out
    }

    private static func render(_ attributes: ItemAttributes) -> String {
        let control = attributes.accessControl
        return JSONValue.object([
            JSONMember("service", .string(attributes.identity.service)),
            JSONMember("account", .string(attributes.identity.account)),
            JSONMember("accessGroup", .string(attributes.identity.accessGroup)),
            JSONMember("synchronizable", .bool(attributes.identity.synchronizable)),
            JSONMember("label", attributes.label.map { .string($0) } ?? .null),
            JSONMember("accessible", .string(control.protection.name)),
            JSONMember("accessControl", control.flags.isEmpty ? .null : .string(control.flags.description)),
            JSONMember("text", .string(control.textForm)),
            JSONMember("created", .number(String(attributes.created.nanoseconds / 1_000_000_000))),
            JSONMember("modified", .number(String(attributes.modified.nanoseconds / 1_000_000_000))),
        ]).rendered
    }
}
