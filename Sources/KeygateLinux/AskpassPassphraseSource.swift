import Glibc
public import KeygatePAM

/// Answers PAM prompts through an askpass program, as `ssh` and `sudo -A` do, for GUI apps
/// and helpers that have no terminal: the program is run with one argument (the reason and
/// the module's prompt, on two lines), shows a dialog, and prints the answer on standard
/// output. A non-zero exit (the dialog was dismissed) is a cancel.
///
/// The program is `KEYGATE_ASKPASS`, else `SSH_ASKPASS` when a display is there (`DISPLAY` or
/// `WAYLAND_DISPLAY`). The answer is read into wiped memory; its final newline is dropped.
public final class AskpassPassphraseSource: PassphraseSource {
    /// The program run for each prompt.
    public let program: String
    private let showMessage: @Sendable (PAMMessage) -> Void

    /// The askpass program the environment names, or nil when it names none.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessEnvironment.current()
    ) -> AskpassPassphraseSource? {
        program(in: environment).map { AskpassPassphraseSource(program: $0) }
    }

    /// The environment variables ``program(in:)`` reads.
    public static let variables = ["KEYGATE_ASKPASS", "SSH_ASKPASS", "DISPLAY", "WAYLAND_DISPLAY"]

    /// The askpass program `environment` names: `KEYGATE_ASKPASS`, else `SSH_ASKPASS` when a
    /// display is there (`DISPLAY` or `WAYLAND_DISPLAY`); nil when it names none.
    public static func program(in environment: [String: String]) -> String? {
        if let program = environment["KEYGATE_ASKPASS"], !program.isEmpty { return program }
        let display = !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        if display, let program = environment["SSH_ASKPASS"], !program.isEmpty { return program }
        return nil
    }

    /// A source running `program`; module messages go to `showMessage` (standard error by default).
    public init(program: String, showMessage: @escaping @Sendable (PAMMessage) -> Void = StandardError.write) {
        self.program = program
        self.showMessage = showMessage
    }

    /// The answer the program printed, or nil when it failed or was dismissed.
    public func passphrase(for prompt: PassphrasePrompt) -> Passphrase? {
        let argument = prompt.reason.isEmpty ? prompt.text : prompt.reason + "\n" + prompt.text
        guard let (pid, descriptor) = Self.spawn(program, argument) else { return nil }
        var answer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 1024)
        defer {
            answer.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
            chunk.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
        }
        while answer.count <= Self.maximumAnswer {
            let got = read(descriptor, &chunk, chunk.count)
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            answer += chunk[0..<got]
        }
        close(descriptor)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exitedWithZero = status & 0x7f == 0 && (status >> 8) & 0xff == 0
        guard exitedWithZero, answer.count <= Self.maximumAnswer else { return nil }
        var length = answer.count
        if length > 0, answer[length - 1] == UInt8(ascii: "\n") { length -= 1 }
        return Passphrase(bytes: answer[0..<length])
    }

    /// Starts `program` with one argument, standard input from `/dev/null`, standard output
    /// into a pipe, no signal blocked; its pid and the pipe's reading end, or nil.
    private static func spawn(_ program: String, _ argument: String) -> (pid_t, Int32)? {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let arguments = [strdup(program), strdup(argument), nil]
        defer { for pointer in arguments { free(pointer) } }
        var pid = pid_t()
        let spawned = arguments.withUnsafeBufferPointer { argv in
            posix_spawn(&pid, program, &actions, &attributes, argv.baseAddress!, environ)
        }
        close(ends[1])
        guard spawned == 0 else {
            close(ends[0])
            return nil
        }
        return (pid, ends[0])
    }

    /// The longest answer read; a longer one is refused as a cancel.
    static let maximumAnswer = 4096

    /// Shows a module's message (standard error by default; askpass programs have no way to show one).
    public func show(_ message: PAMMessage) { showMessage(message) }
}
