import FoundationEssentials
import Keygate
import KeygatePolicy
import KeygateStore

/// `keygate credential get|store|erase`: git's credential-helper protocol over the embedded
/// store. Installed as `git-credential-keygate`, so `git config credential.helper keygate`
/// uses it (with options: `credential.helper "keygate --access-control userPresence"`).
struct GitCredentialCommand: Command {
    static let options = [
        ProtectionOptions.accessControl, ProtectionOptions.accessible, ItemOptions.accessGroup,
    ]

    static let configuration = CommandConfiguration(
        name: "credential", summary: "git's credential-helper protocol (git-credential-keygate)",
        discussion: """
            usage: keygate credential [--access-control FLAGS] [--accessible CLASS] [--access-group G]
                                      get|store|erase
                   git-credential-keygate [same options] get|store|erase

            Speaks git's credential-helper protocol on standard input and output. A credential is
            the item service "git:<protocol>://<host>[/<path>]", account <username>; its value keeps
            password, oauth_refresh_token and password_expiry_utc as git sent them. get answers
            after the item's access control allows it (asking through PAM on the terminal when it
            needs a proof); nothing is printed when there is no credential, and "quit=1" when you
            cancel, so git stops instead of asking for the remote password. store adds the
            credential with the given protection, or replaces a changed one; embedded, storing the
            credential a get just returned changes nothing and asks nothing (through the daemon it
            updates the item). erase deletes it (no proof needed).
            Other actions are ignored, as git asks of helpers.

              git config --global credential.helper "keygate --access-control userPresence"
            """,
        options: options, maximumPositionals: nil, loadsPolicies: true, choosesMode: true)

    /// The protection of stored credentials, as typed.
    let protection: ProtectionOptions
    /// The access group an option names, or nil for `keygate`.
    let accessGroup: String?
    /// The words that are no options: exactly one, the action (``validate()``).
    let actions: [String]

    init(parsing arguments: ParsedArguments) {
        protection = ProtectionOptions(arguments)
        accessGroup = arguments.value(ItemOptions.accessGroup)
        actions = arguments.positionals
    }

    func validate() throws(UsageError) {
        guard actions.count == 1 else { throw UsageError("give one action: get, store or erase") }
    }

    func run(_ context: CommandContext) async throws(KeygateError) -> ExitStatus {
        let action = actions[0]
        guard ["get", "store", "erase"].contains(action) else { return .success }
        let credential = try GitCredential(parsing: try context.environment.input.readCredential())
        guard let service = credential.service else { return .success }
        try await context.withSession(accessGroup: accessGroup) { session throws(KeygateError) in
            switch action {
            case "get": try await get(credential, service: service, session: session, context)
            case "store":
                do throws(KeygateError) {
                    try await store(credential, service: service, session: session, context)
                } catch {
                    // git ignores a store's outcome (approve exits 0): say plainly that nothing
                    // changed, on standard error, which git shows.
                    let who = credential.username.map { " (\($0))" } ?? ""
                    throw KeygateError(
                        error.status,
                        "the new credential for \(service)\(who) was NOT stored (nothing was changed): \(error.message)",
                        cause: error.cause)
                }
            default: try await erase(credential, service: service, session: session)
            }
        }
        return .success
    }

    func get(
        _ credential: GitCredential, service: String, session: Session, _ context: CommandContext
    ) async throws(KeygateError) {
        var query = ItemQuery(
            service: service, account: credential.username, accessGroup: session.accessGroup, returnData: true,
            returnAttributes: true)
        query.operationPrompt = "git asks for your credential for \(service.dropFirst("git:".count))"
        let items: [MatchedItem]
        do {
            items = try await session.copyMatching(query)
        } catch KeygateStatus.itemNotFound {
            return
        } catch KeygateStatus.userCanceled {
            try context.environment.output.write(Array("quit=1\n".utf8))
            return
        }
        guard let item = items.first, let stored = item.data, let account = item.attributes?.identity.account else {
            return
        }
        guard !account.contains("\n"), !account.contains("\0") else {
            throw KeygateError(.param, "the stored account of \(service) cannot be sent to git (it has a line break)")
        }
        try GitCredential.writeAnswer(username: account, stored: stored, to: context.environment.output)
        Self.served(context)?.remember(service: service, account: account, stored: stored, now: Self.now())
    }

    func store(
        _ credential: GitCredential, service: String, session: Session, _ context: CommandContext
    ) async throws(KeygateError) {
        guard credential.hasPassword, let username = credential.username, !username.isEmpty else { return }
        let served = Self.served(context)
        let query = ItemQuery(service: service, account: username, accessGroup: session.accessGroup)
        let exists = try await !session.matches(query).isEmpty
        if exists
            && served?.wasServed(service: service, account: username, stored: credential.secret, now: Self.now())
                == true
        {
            return
        }
        if exists {
            try await session.update(
                query, changes: ItemChanges(data: credential.secret))
        } else {
            let protection = try self.protection.itemProtection()
            do {
                try await session.add(
                    AddRequest(
                        service: service, account: username, accessGroup: session.accessGroup, protection: protection,
                        data: credential.secret))
            } catch KeygateStatus.duplicateItem {
                try await session.update(
                    query, changes: ItemChanges(data: credential.secret))
            }
        }
        served?.remember(service: service, account: username, stored: credential.secret, now: Self.now())
    }

    func erase(_ credential: GitCredential, service: String, session: Session) async throws(KeygateError) {
        let query = ItemQuery(service: service, account: credential.username, accessGroup: session.accessGroup)
        do {
            try await session.delete(query)
        } catch KeygateStatus.itemNotFound {}
    }

    /// The served-credential records (`$XDG_RUNTIME_DIR/keygate/`), in embedded mode only:
    /// through the daemon, proofs and their reuse are the daemon's, so the client's runtime
    /// directory and session are neither read nor created, and a record the user can write
    /// cannot turn a `store` into a no-op (each `store` of an existing item updates it).
    static func served(_ context: CommandContext) -> ServedCredentials? {
        guard context.global.mode == .embedded else { return nil }
        return ServedCredentials.open(context.console)
    }

    /// Seconds since the epoch.
    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }
}
