import CKeygated
import CPeer
import Glibc
import Keygate
import KeygateServing

// keygated --socket PATH --state-directory DIR [--config FILE]: see Server, Connection and
// PeerIdentity for what it does; Configuration for the file. Started by keygate.socket, it
// serves the socket systemd passed instead of binding PATH (SocketActivation).
// A parent may have blocked or ignored signals (the mask is inherited across exec): start from
// a clean slate; SIGPIPE stays ignored (sends use MSG_NOSIGNAL). The stop signals are then
// blocked in every thread and taken by one (StopSignals), which removes the socket and ends.
var noSignals = sigset_t()
sigemptyset(&noSignals)
sigprocmask(SIG_SETMASK, &noSignals, nil)
for number in StopSignals.numbers { signal(number, SIG_DFL) }
StopSignals.block()
signal(SIGPIPE, SIG_IGN)
if let text = Arguments.informational(Array(CommandLine.arguments.dropFirst())) {
    print(text)
    exit(0)
}
// A crash ends the daemon at once, by the kernel's default action: the Swift runtime's crash
// handler would print a backtrace with the memory around each register (a key's or a value's
// bytes among them) to the daemon's log, and take seconds doing it.
for number in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGQUIT, SIGSYS] { signal(number, SIG_DFL) }
do throws(StartupError) {
    // Before any user's key or value is in memory: a crash must not write them to a core file
    // (whatever RLIMIT_CORE the daemon inherited, and whatever core_pattern says).
    guard keygated_forbid_core_dumps() == 0 else {
        throw StartupError("cannot forbid core dumps (errno \(errno)); not started")
    }
    let arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
    // First, before anything could start a child: the variables are removed either way.
    let inherited = try SocketActivation.take()
    let configuration =
        try arguments.config.map { path throws(StartupError) in try Configuration(path: path) }
        ?? Configuration()
    let state = try StateDirectory(path: arguments.stateDirectory)
    let policies = try DaemonPolicies.load(configuration.policies)
    for warning in PolicyDirectory.warnings(policies) { Log.line("warning: \(warning)") }
    let server = Server(
        path: arguments.socket,
        keychains: UserKeychains(state: state, configuration: configuration, policies: policies),
        configuration: configuration,
        forcePidfdFallback: configuration.forcePidfdFallback)
    let fd: Int32
    if let inherited {
        fd = inherited.fd
        // keygate.socket sets it (PassCredentials=yes) before any client connects; a unit
        // without it gets it now, for the connections to come.
        guard keygate_pass_credentials(fd) == 0 else {
            throw StartupError("cannot set SO_PASSCRED on the socket from systemd (errno \(errno))")
        }
    } else {
        fd = try server.listen()
    }
    let origin =
        switch inherited?.path {
        case nil: ""
        case arguments.socket: "from systemd, "
        case _?: "from systemd, --socket \(arguments.socket) unused, "
        }
    guard StopSignals.wait(removing: inherited == nil ? arguments.socket : nil) else {
        throw StartupError("cannot start the thread that waits for SIGTERM")
    }
    Log.line(
        "listening on \(inherited?.path ?? arguments.socket) (\(origin)state \(arguments.stateDirectory), "
            + "device \(configuration.deviceState))")
    server.run(listening: fd)
} catch {
    Log.line(error.description)
    exit(error.exitStatus)
}
