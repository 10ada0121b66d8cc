import Glibc
import KeygatePAM
import KeygatePolicy
import KeygateTesting
import Testing

/// A broker names the PAM user and describes its caller (`PAM_TTY`, `PAM_RUSER`). The `kg-caller` service (pam_succeed_if, then pam_matrix) proves only for the
/// fixture's terminal and remote user.
@Suite struct PAMCallerTests {
    func authenticator(_ answer: String, caller: PAMCaller, user: String? = nil) throws -> PAMAuthenticator {
        let world = try PAMFixture.load()
        return try PAMAuthenticator(
            configuration: .init(passcodeService: "kg-caller", failureDelay: .zero, library: world.library),
            source: ProgrammaticPassphraseSource(passphrase: answer), user: user, caller: caller)
    }

    let caller = PAMCaller(terminal: PAMFixture.callerTerminal, remoteUser: PAMFixture.callerUser)

    @Test func theCallersTerminalAndUserReachTheModules() async throws {
        let outcome = try await authenticator(PAMFixture.passcode, caller: caller)
            .prove(.passcode, prompt: "Read", context: AuthenticationContext())
        #expect(outcome == .proved(.passcode))
    }

    @Test(arguments: [
        PAMCaller(), PAMCaller(terminal: "/dev/pts/1", remoteUser: PAMFixture.callerUser),
        PAMCaller(terminal: PAMFixture.callerTerminal, remoteUser: "someone-else"),
    ])
    func aMissingOrOtherCallerIsRefusedByTheStack(other: PAMCaller) async throws {
        let outcome = try await authenticator(PAMFixture.passcode, caller: other)
            .prove(.passcode, prompt: "Read", context: AuthenticationContext())
        #expect(outcome.status == .authFailed, "\(outcome)")
    }

    @Test func theNamedUserIsTheOneAuthenticated() async throws {
        let world = try PAMFixture.load()
        #expect(try authenticator("x", caller: caller).user == world.user)
        // pam_matrix knows no such user: the right passcode of the fixture's user proves nothing.
        let other = try authenticator(PAMFixture.passcode, caller: caller, user: "kg-nobody-\(world.user)")
        #expect(other.user == "kg-nobody-\(world.user)")
        let outcome = await other.prove(.passcode, prompt: "Read", context: AuthenticationContext())
        #expect(outcome.status == .authFailed, "\(outcome)")
    }
}

/// The broker's account lookup: by uid, never by a name a client gives.
@Suite struct PeerAccountTests {
    @Test func aUidWithAnEntryHasItsName() throws {
        #expect(try ProcessOwner.userName(of: 0) == "root")
        #expect(try ProcessOwner.userName(of: geteuid()) == (try ProcessOwner.userName()))
    }

    @Test func aUidWithoutAnEntryIsNotAvailable() throws {
        #expect(throws: KeygateError(.notAvailable, "")) { try ProcessOwner.userName(of: 61_999) }
    }
}
