import Glibc

// keygated --socket PATH --state-directory DIR [--config FILE]: see Server, Connection and
// PeerIdentity for what it does; Configuration for the file.
// A parent may have blocked or ignored signals (the mask is inherited across exec): start from
// a clean slate so SIGTERM stops the daemon; SIGPIPE stays ignored (sends use MSG_NOSIGNAL).
var noSignals = sigset_t()
sigemptyset(&noSignals)
sigprocmask(SIG_SETMASK, &noSignals, nil)
for number in [SIGTERM, SIGINT, SIGHUP] { signal(number, SIG_DFL) }
signal(SIGPIPE, SIG_IGN)
do throws(StartupError) {
    let arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
    let configuration =
        try arguments.config.map { path throws(StartupError) in try Configuration(path: path) }
        ?? Configuration()
    let state = try StateDirectory(path: arguments.stateDirectory)
    let policies = try DaemonPolicies.load(configuration.policies)
    let server = Server(
        path: arguments.socket,
        keychains: UserKeychains(state: state, configuration: configuration, policies: policies),
        configuration: configuration,
        forcePidfdFallback: configuration.forcePidfdFallback)
    let fd = try server.listen()
    Log.line(
        "listening on \(arguments.socket) (state \(arguments.stateDirectory), device \(configuration.deviceState))")
    server.run(listening: fd)
} catch {
    Log.line(error.description)
    exit(error.exitStatus)
}
