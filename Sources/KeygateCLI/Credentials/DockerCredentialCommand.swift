import Keygate
import KeygatePolicy
import KeygateStore

/// `docker-credential-keygate store|get|erase|list|version`: docker's credential-helper
/// protocol, as docker drives it (set `"credsStore": "keygate"` in `~/.docker/config.json`).
///
/// A credential is the item service `docker:<ServerURL>`, account the user name, value the
/// secret; one credential per server, as docker expects. Errors are one line on standard
/// output and exit 1, docker's convention; a missing credential is docker's exact message.
struct DockerCredentialCommand: RunnableCommand {
    /// The message docker recognises as "not found".
    static let notFound = "credentials not found in native keychain"
    /// What a credential's item service starts with.
    static let prefix = "docker:"

    static let configuration = CommandConfiguration(
        name: "docker-credential", summary: "docker's credential-helper protocol (docker-credential-keygate)",
        discussion: """
            usage: docker-credential-keygate store|get|erase|list|version
                   keygate docker-credential store|get|erase|list|version

            store reads {"ServerURL","Username","Secret"} as JSON; get and erase read the server URL;
            list prints {"<ServerURL>": "<Username>", …}. get asks for a proof when the credential's
            access control needs one (none by default). Errors go to standard output, exit 1.
            """,
        loadsPolicies: true, choosesMode: true)

    /// What docker asked for.
    enum Action: Sendable, Equatable {
        case store, get, erase, list, version
        /// A word that is no action: refused on standard output, exit 1.
        case unknown(String)
        /// Not exactly one word: the usage on standard output, exit 1.
        case usage
    }

    /// What docker asked for.
    let action: Action

    /// docker's convention rather than keygate's: exactly one word, and anything else prints
    /// the usage on standard output and exits 1 (only `--help` or `-h` alone exits 0).
    static func parse(_ words: ArraySlice<String>) throws(ParseFailure) -> ParseOutcome {
        guard words.count == 1, let word = words.first else { return .command(Self(action: .usage)) }
        if word == "--help" || word == "-h" { return .help(configuration.help) }
        let actions: [String: Action] = [
            "store": .store, "get": .get, "erase": .erase, "list": .list, "version": .version,
        ]
        return .command(Self(action: actions[word] ?? .unknown(word)))
    }

    init(action: Action) { self.action = action }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        let console = context.console
        do throws(KeygateError) {
            switch action {
            case .usage:
                console.out(Self.configuration.help)
                return .failure
            case .version:
                console.out("docker-credential-keygate (keygate) \(KeygateVersion.current)")
                return .success
            case .store: try await store(try context.environment.input.readCredential(), context)
            case .get: try await get(try serverURL(context), context)
            case .erase: try await erase(try serverURL(context), context)
            case .list: try await list(context)
            case .unknown(let word): throw KeygateError(.param, "Unknown credential action `\(word)`")
            }
            return .success
        } catch KeygateStatus.itemNotFound {
            console.out(Self.notFound)
            return .failure
        } catch {
            console.out(error.message)
            return .failure
        }
    }

    /// The server URL on standard input, trimmed.
    func serverURL(_ context: CommandContext) throws(KeygateError) -> String {
        let input = try context.environment.input.readCredential()
        let text = input.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }.trimmingWhitespace()
        guard !text.isEmpty else { throw KeygateError(.param, "no credentials server URL") }
        return text
    }

    func store(_ input: SecretData, _ context: CommandContext) async throws(KeygateError) {
        let text = input.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let node: JSONNode
        do {
            node = try JSONParser.parse(text)
        } catch {
            throw KeygateError(
                .param, "the credentials are not JSON: \(error.message) (line \(error.line), column \(error.column))")
        }
        guard case .object(let members) = node.value else {
            throw KeygateError(.param, "the credentials are not a JSON object")
        }
        func string(_ key: String) -> String? {
            guard case .string(let value)? = members.first(where: { $0.key == key })?.value.value else { return nil }
            return value
        }
        guard let server = string("ServerURL"), !server.isEmpty else {
            throw KeygateError(.param, "no credentials server URL")
        }
        guard let username = string("Username"), !username.isEmpty else {
            throw KeygateError(.param, "no credentials username")
        }
        let secret = SecretData(string("Secret") ?? "")
        try await context.withSession { session throws(KeygateError) in
            let service = Self.prefix + server
            // One credential per server: another user name's credential for it is replaced, but
            // only once the new one is stored (as the git helper does: update the user's own
            // credential, else add it), so a refused store leaves the old one in place.
            let query = ItemQuery(service: service, accessGroup: session.accessGroup)
            var all = query
            all.matchLimit = .all
            all.returnAttributes = true
            let existing = try await session.matches(all).compactMap { $0.attributes?.identity.account }
            var mine = query
            mine.account = username
            if existing.contains(username) {
                try await session.update(mine, changes: ItemChanges(data: secret))
            } else {
                do throws(KeygateError) {
                    try await session.add(
                        AddRequest(service: service, account: username, accessGroup: session.accessGroup, data: secret))
                } catch KeygateStatus.duplicateItem {
                    try await session.update(mine, changes: ItemChanges(data: secret))
                }
            }
            for other in Set(existing) where other != username {
                var theirs = query
                theirs.account = other
                do throws(KeygateError) {
                    try await session.delete(theirs)
                } catch KeygateStatus.itemNotFound {}
            }
        }
    }

    func get(_ server: String, _ context: CommandContext) async throws(KeygateError) {
        try await context.withSession { session throws(KeygateError) in
            var query = ItemQuery(
                service: Self.prefix + server, accessGroup: session.accessGroup, returnData: true,
                returnAttributes: true)
            query.operationPrompt = "docker asks for your credential for \(server)"
            let items = try await session.copyMatching(query)
            guard let item = items.first, let secret = item.data, let username = item.attributes?.identity.account
            else {
                throw KeygateError(.itemNotFound, Self.notFound)
            }
            var out = Array("{\"ServerURL\":".utf8)
            defer { SecretData.wipe(&out) }
            out += Array(JSONValue.string(server).rendered.utf8)
            out += Array(",\"Username\":".utf8) + Array(JSONValue.string(username).rendered.utf8)
            out += Array(",\"Secret\":".utf8)
            secret.withUnsafeBytes { JSONBytes.appendString($0, to: &out) }
            out += Array("}\n".utf8)
            try context.environment.output.write(out)
        }
    }

    func erase(_ server: String, _ context: CommandContext) async throws(KeygateError) {
        try await context.withSession { session throws(KeygateError) in
            try await session.delete(
                ItemQuery(service: Self.prefix + server, accessGroup: session.accessGroup))
        }
    }

    func list(_ context: CommandContext) async throws(KeygateError) {
        try await context.withSession { session throws(KeygateError) in
            var query = ItemQuery(accessGroup: session.accessGroup, returnAttributes: true)
            query.matchLimit = .all
            let members = try await session.matches(query).compactMap { $0.attributes?.identity }
                .filter { $0.service.hasPrefix(Self.prefix) }
                .map { JSONMember(String($0.service.dropFirst(Self.prefix.count)), .string($0.account)) }
            context.console.out(JSONValue.object(members).rendered)
        }
    }
}

/// JSON string escaping straight into a byte buffer, for values that must not pass through a
/// `String` (a secret).
enum JSONBytes {
    /// Appends `bytes` (UTF-8) as a JSON string literal.
    static func appendString(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0..<0x20:
                out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
