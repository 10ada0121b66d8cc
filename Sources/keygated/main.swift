import Glibc

// keygated --socket PATH --state-directory DIR [--config FILE]: see Server, Connection and
// PeerIdentity for what it does; Configuration for the file.
signal(SIGPIPE, SIG_IGN)
do throws(StartupError) {
    let arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
    let configuration = try arguments.config.map { path throws(StartupError) in try Configuration(path: path) }
        ?? Configuration()
    let state = try StateDirectory(path: arguments.stateDirectory)
    let server = Server(
        path: arguments.socket, keychains: UserKeychains(state: state, configuration: configuration),
        configuration: configuration,
        forcePidfdFallback: configuration.forcePidfdFallback)
    let fd = try server.listen()
    Log.line("listening on \(arguments.socket) (state \(arguments.stateDirectory), device \(configuration.deviceState))")
    server.run(listening: fd)
} catch {
    Log.line(error.description)
    exit(error.description.hasPrefix("usage") || error.description.contains(Arguments.usage) ? 64 : 78)
}
