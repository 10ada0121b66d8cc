import KeygatePolicy
import Testing

/// Which program names the policy lint takes for an interpreter (a grant naming one admits every
/// script it runs).
@Suite struct ProgramPathLintTests {
    @Test(arguments: [
        "/usr/bin/python3", "/usr/bin/python3.11", "/usr/bin/python3.6m", "/usr/bin/perl5.36.0", "/bin/sh",
        "/usr/bin/bash", "/usr/bin/node", "/usr/bin/env", "/bin/busybox", "/usr/bin/lua5.4", "/usr/bin/python*",
        "/lib64/ld-linux-x86-64.so.2", "/usr/bin/qemu-x86_64", "/usr/bin/gdb",
    ])
    func interpreters(_ path: String) {
        #expect(ProgramPathLint.isInterpreter(path))
    }

    @Test(arguments: [
        "/usr/bin/ssh", "/usr/bin/sleep", "/usr/bin/example-app", "/usr/bin/example-*", "/usr/bin/keygate",
        "/usr/bin/shred", "/usr/bin/Rust", "/usr/bin/git-credential-keygate", "/opt/app/bin/app2",
    ])
    func notInterpreters(_ path: String) {
        #expect(!ProgramPathLint.isInterpreter(path))
    }
}
