import FoundationEssentials
import Glibc
import Keygate
import KeygatePolicy
import KeygateStore

/// `keygate credential get|store|erase`: git's credential-helper protocol over the embedded
/// store. Installed as `git-credential-keygate`, so `git config credential.helper keygate`
/// uses it (with options: `credential.helper "keygate --access-control userPresence"`).
enum GitCredentialCommand {
    static let options: [Arguments.Option] = [
        .init(name: "access-control", value: "FLAGS", help: "access-control flags for stored credentials"),
        .init(name: "accessible", value: "CLASS", help: "protection class for stored credentials"),
        .init(name: "access-group", short: "g", value: "G", help: "the access group (default: keygate)"),
    ]

    static let help = """
        usage: keygate credential [--access-control FLAGS] [--accessible CLASS] [--access-group G]
                                  get|store|erase
               git-credential-keygate [same options] get|store|erase

        Speaks git's credential-helper protocol on standard input and output. A credential is
        the item service "git:<protocol>://<host>[/<path>]", account <username>; its value keeps
        password, oauth_refresh_token and password_expiry_utc as git sent them. get answers
        after the item's access control allows it (asking through PAM on the terminal when it
        needs a proof); nothing is printed when there is no credential, and "quit=1" when you
        cancel, so git stops instead of asking for the remote password. store adds the
        credential with the given protection, or replaces a changed one; storing the credential
        a get just returned changes nothing and asks nothing. erase deletes it (no proof needed).
        Other actions are ignored, as git asks of helpers.

          git config --global credential.helper "keygate --access-control userPresence"

        \(Arguments.helpLines(options))
        """

    @Sendable static func run(_ global: GlobalOptions, _ words: ArraySlice<String>) async -> ExitStatus {
        let arguments: Arguments
        do throws(Arguments.UsageError) {
            arguments = try Arguments(words, options: options)
            if arguments.wantsHelp {
                Console.out(help)
                return .success
            }
            guard arguments.positionals.count == 1 else {
                throw Arguments.UsageError(message: "give one action: get, store or erase")
            }
        } catch {
            return KeygateCommand.fail(usage: error, help: help)
        }
        let action = arguments.positionals[0]
        guard ["get", "store", "erase"].contains(action) else { return .success }
        do throws(KeygateError) {
            let credential = try GitCredential(parsing: try CredentialInput.read())
            guard let service = credential.service else { return .success }
            let session = try Session(global, accessGroup: arguments.values["access-group"])
            defer { session.finish() }
            switch action {
            case "get": try await get(credential, service: service, session: session)
            case "store": try await store(credential, service: service, arguments: arguments, session: session)
            default: try await erase(credential, service: service, session: session)
            }
            return .success
        } catch {
            return KeygateCommand.fail(error)
        }
    }

    static func get(_ credential: GitCredential, service: String, session: Session) async throws(KeygateError) {
        var query = ItemQuery(
            service: service, account: credential.username, accessGroup: session.accessGroup, returnData: true,
            returnAttributes: true)
        query.operationPrompt = "git asks for your credential for \(service.dropFirst("git:".count))"
        let items: [MatchedItem]
        do {
            items = try await session.keychain.copyMatching(query, context: session.context)
        } catch KeygateStatus.itemNotFound {
            return
        } catch KeygateStatus.userCanceled {
            try CredentialInput.write(Array("quit=1\n".utf8))
            return
        }
        guard let item = items.first, let stored = item.data, let account = item.attributes?.identity.account else {
            return
        }
        guard !account.contains("\n"), !account.contains("\0") else {
            throw KeygateError(.param, "the stored account of \(service) cannot be sent to git (it has a line break)")
        }
        var answer = GitCredential.answer(username: account, stored: stored)
        defer { SecretData.wipe(&answer) }
        try CredentialInput.write(answer)
        ServedCredentials.open()?.remember(service: service, account: account, stored: stored, now: now())
    }

    static func store(
        _ credential: GitCredential, service: String, arguments: Arguments, session: Session
    ) async throws(KeygateError) {
        guard credential.hasPassword, let username = credential.username, !username.isEmpty else { return }
        let served = ServedCredentials.open()
        let query = ItemQuery(service: service, account: username, accessGroup: session.accessGroup)
        let exists = try await !ItemCommands.matches(query, session).isEmpty
        if exists
            && served?.wasServed(service: service, account: username, stored: credential.secret, now: now()) == true
        {
            return
        }
        if exists {
            try await session.keychain.update(
                query, changes: ItemChanges(data: credential.secret), context: session.context)
        } else {
            let protection = try ItemCommands.protection(arguments)
            do {
                try await session.keychain.add(
                    AddRequest(
                        service: service, account: username, accessGroup: session.accessGroup, protection: protection,
                        data: credential.secret),
                    context: session.context)
            } catch KeygateStatus.duplicateItem {
                try await session.keychain.update(
                    query, changes: ItemChanges(data: credential.secret), context: session.context)
            }
        }
        served?.remember(service: service, account: username, stored: credential.secret, now: now())
    }

    static func erase(_ credential: GitCredential, service: String, session: Session) async throws(KeygateError) {
        let query = ItemQuery(service: service, account: credential.username, accessGroup: session.accessGroup)
        do {
            try await session.keychain.delete(query, context: session.context)
        } catch KeygateStatus.itemNotFound {}
    }

    /// Seconds since the epoch.
    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }
}
